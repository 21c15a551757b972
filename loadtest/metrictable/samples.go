package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
)

// instanceSamples is what run.sh reports of one instance's samples: its
// goroutines before the load, at their peak and idle after it, and its
// peak resident memory in kB (empty where no sample held a figure).
type instanceSamples struct {
	before, peak, idle, peakRSS string
}

// Columns of run.sh's samples CSV.
const (
	colLabel      = 0
	colInstance   = 2
	colRSS        = 3
	colGoroutines = 4
)

// summarizeSamples reads run.sh's samples CSV (a header, then label,
// elapsed_s, instance, rss_kb, goroutines, ...), by instance number.
func summarizeSamples(in io.Reader) (map[int]*instanceSamples, error) {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read the samples: %w", err)
	}
	byInstance := map[int]*instanceSamples{}
	for _, rec := range recs[min(1, len(recs)):] {
		if len(rec) <= colGoroutines {
			return nil, fmt.Errorf("a sample of %d columns, want at least %d", len(rec), colGoroutines+1)
		}
		n, err := strconv.Atoi(rec[colInstance])
		if err != nil {
			return nil, fmt.Errorf("a sample's instance %q: %w", rec[colInstance], err)
		}
		s := byInstance[n]
		if s == nil {
			s = &instanceSamples{}
			byInstance[n] = s
		}
		gor := rec[colGoroutines]
		switch rec[colLabel] {
		case "before":
			s.before = gor
		case "idle":
			s.idle = gor
		}
		s.peak = larger(s.peak, gor)
		s.peakRSS = larger(s.peakRSS, rec[colRSS])
	}
	return byInstance, nil
}

// larger is whichever of two figures is the larger, the first on a tie.
func larger(cur, v string) string {
	if number(v) > number(cur) {
		return v
	}
	return cur
}

// printSamples prints one line per instance, in order:
// instance,before,peak,idle,peak_rss_kb.
func printSamples(path string, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the samples: %w", err)
	}
	defer f.Close()
	byInstance, err := summarizeSamples(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, n := range slices.Sorted(maps.Keys(byInstance)) {
		s := byInstance[n]
		if _, err := fmt.Fprintf(out, "%d,%s,%s,%s,%s\n", n, s.before, s.peak, s.idle, s.peakRSS); err != nil {
			return err
		}
	}
	return nil
}
