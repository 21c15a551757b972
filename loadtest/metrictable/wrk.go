package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// fields reads the key=value tokens of a line; other tokens are skipped.
func fields(line string) map[string]string {
	kv := map[string]string{}
	for tok := range strings.FieldsSeq(line) {
		if k, v, ok := strings.Cut(tok, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// number is v as a float, 0 when it is empty or not a number ("-").
func number(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return f
}

// benchLines are the BENCH lines loadtest/bench.lua wrote into the files.
func benchLines(paths []string) ([]string, error) {
	var lines []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read the wrk output: %w", err)
		}
		for line := range strings.Lines(string(data)) {
			if strings.HasPrefix(line, "BENCH ") {
				lines = append(lines, strings.TrimSpace(line))
			}
		}
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no BENCH line in %s: did wrk run loadtest/bench.lua?", strings.Join(paths, " "))
	}
	return lines, nil
}

// mergeBench is one BENCH line for wrk processes that ran side by side:
// the counts summed; the duration and the percentiles the worst one's
// (each process saw a part of the connections, so a percentile of the
// whole is not known; the worst bounds it).
func mergeBench(lines []string) string {
	worst := map[string]string{"duration_s": "", "p50_ms": "", "p99_ms": ""}
	sums := map[string]int64{}
	for _, line := range lines {
		for k, v := range fields(line) {
			if w, ok := worst[k]; ok {
				if w == "" || number(v) > number(w) {
					worst[k] = v
				}
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			sums[k] += n
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "BENCH requests=%d duration_s=%s errors=%d p50_ms=%s p99_ms=%s",
		sums["requests"], worst["duration_s"], sums["errors"], worst["p50_ms"], worst["p99_ms"])
	var codes []string
	for k := range sums {
		if strings.HasPrefix(k, "code_") {
			codes = append(codes, k)
		}
	}
	slices.Sort(codes)
	for _, k := range codes {
		fmt.Fprintf(&b, " %s=%d", k, sums[k])
	}
	return b.String()
}

func printMergedBench(paths []string, out io.Writer) error {
	lines, err := benchLines(paths)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, mergeBench(lines))
	return err
}

// printRate prints wrk's "Requests/sec:" figure as a whole number, or
// nothing when wrk printed none.
func printRate(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "Requests/sec:" {
			_, err := fmt.Fprintf(out, "%d\n", int64(number(f[1])))
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the wrk output: %w", err)
	}
	return nil
}
