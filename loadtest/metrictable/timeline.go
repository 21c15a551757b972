package main

import (
	"fmt"
	"io"
	"strings"
)

// The purchase path's histograms the batch timeline reads (internal/purchase).
const (
	batchSize       = "seckill_purchase_batch_size"
	batchStep       = "seckill_purchase_batch_step_seconds"
	groupActivities = "seckill_purchase_write_group_activities"
	groupSeconds    = "seckill_purchase_write_group_seconds"
)

// batchSteps are the steps of a batch, in the order the timeline shows them.
var batchSteps = []string{"grant", "verify", "deduct", "write", "release"}

// timeline is where the batches' time went between two scrapes of one
// instance, as one line of key=value: the batches, their mean size, each
// step's mean ms, the write groups, their mean activities and mean ms ("-"
// where nothing was observed).
func timeline(before, after scrape) string {
	delta := func(name, label, value string) totals {
		a, b := before.histogram(name, label, value), after.histogram(name, label, value)
		return totals{sum: b.sum - a.sum, count: b.count - a.count}
	}
	sizes := delta(batchSize, "", "")
	mean := 0.0
	if sizes.count > 0 {
		mean = sizes.sum / sizes.count
	}
	var b strings.Builder
	fmt.Fprintf(&b, "batches=%d mean_batch=%.1f", int64(sizes.count), mean)
	for _, st := range batchSteps {
		fmt.Fprintf(&b, " %s_ms=%s", st, meanOf(delta(batchStep, "step", st), 1000, "%.2f"))
	}
	groups := delta(groupActivities, "", "")
	fmt.Fprintf(&b, " write_groups=%d mean_group=%s", int64(groups.count), meanOf(groups, 1, "%.1f"))
	fmt.Fprintf(&b, " group_ms=%s", meanOf(delta(groupSeconds, "", ""), 1000, "%.2f"))
	return b.String()
}

// meanOf is scale times the mean observation of t in format, or "-" when
// there is none.
func meanOf(t totals, scale float64, format string) string {
	if t.count <= 0 {
		return "-"
	}
	return fmt.Sprintf(format, scale*t.sum/t.count)
}

func printTimeline(beforePath, afterPath string, out io.Writer) error {
	before, err := readScrape(beforePath)
	if err != nil {
		return err
	}
	after, err := readScrape(afterPath)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, timeline(before, after))
	return err
}
