package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// benchRun is one run of loadtest/bench.sh, one line of its runs file:
// conns, instances, activities, orders (counted in SQL), rss_mb,
// healthz_per_s ("-" without --floor), the merged BENCH line's fields and
// the batch timeline's.
type benchRun struct {
	kv map[string]string
	// answers and orders are the answers and the durable orders a second.
	answers, orders int64
}

func readRuns(path string) ([]benchRun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the runs: %w", err)
	}
	var runs []benchRun
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r := benchRun{kv: fields(line)}
		if r.kv["conns"] == "" {
			return nil, fmt.Errorf("%s: a run without conns=: %q", path, strings.TrimSpace(line))
		}
		if secs := number(r.kv["duration_s"]); secs > 0 {
			r.answers = int64(number(r.kv["requests"]) / secs)
			r.orders = int64(number(r.kv["orders"]) / secs)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run in %s", path)
	}
	return runs, nil
}

// ratio is a/b to two places, or "-" when b is not positive.
func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// share is the percentage part/whole to one place, "-" without a whole.
func share(part, whole string) string {
	if number(whole) <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*number(part)/number(whole))
}

// baseline is the orders a second of the latest run up to runs[i] that
// has key at 1 and the same value as runs[i] at each of same, or 0.
func baseline(runs []benchRun, i int, key string, same ...string) float64 {
	for j := i; j >= 0; j-- {
		if runs[j].kv[key] != "1" {
			continue
		}
		match := true
		for _, k := range same {
			match = match && runs[j].kv[k] == runs[i].kv[k]
		}
		if match {
			return float64(runs[j].orders)
		}
	}
	return 0
}

// ratios are runs[i]'s orders a second against the one-activity run, the
// one-instance run (both at the same concurrency and the same count of the
// other) and GET /healthz's answers a second.
func ratios(runs []benchRun, i int) (vsOne, vsInstance, vsHealthz string) {
	ops := float64(runs[i].orders)
	return ratio(ops, baseline(runs, i, "activities", "conns", "instances")),
		ratio(ops, baseline(runs, i, "instances", "conns", "activities")),
		ratio(ops, number(runs[i].kv["healthz_per_s"]))
}

func printRatio(path string, out io.Writer) error {
	runs, err := readRuns(path)
	if err != nil {
		return err
	}
	i := len(runs) - 1
	r := runs[i]
	vsOne, vsInstance, vsHealthz := ratios(runs, i)
	_, err = fmt.Fprintf(out, "BENCH_RATIO conns=%s instances=%s activities=%s orders_per_s=%d vs_one_activity=%s vs_one_instance=%s healthz_per_s=%s vs_healthz=%s\n",
		r.kv["conns"], r.kv["instances"], r.kv["activities"], r.orders, vsOne, vsInstance, orDash(r.kv["healthz_per_s"]), vsHealthz)
	return err
}

// orDash is v, or "-" when it is empty.
func orDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// orZero is v, or "0" when it is empty (an answer wrk never saw).
func orZero(v string) string {
	if v == "" {
		return "0"
	}
	return v
}

// table prints a Markdown table: the header, a right-aligned rule, rows.
func table(out io.Writer, header []string, rows [][]string) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString(strings.Repeat("| ---: ", len(header)) + "|\n")
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func printOrdersTable(path string, out io.Writer) error {
	runs, err := readRuns(path)
	if err != nil {
		return err
	}
	rows := make([][]string, len(runs))
	for i, r := range runs {
		vsOne, vsInstance, vsHealthz := ratios(runs, i)
		reqs := r.kv["requests"]
		rows[i] = []string{r.kv["conns"], r.kv["instances"], r.kv["activities"],
			fmt.Sprint(r.answers), fmt.Sprintf("**%d**", r.orders), vsOne, vsInstance,
			orDash(r.kv["healthz_per_s"]), vsHealthz, share(r.kv["code_201"], reqs), orZero(r.kv["code_409"]),
			share(r.kv["code_429"], reqs), share(r.kv["code_503"], reqs), r.kv["p50_ms"], r.kv["p99_ms"], r.kv["rss_mb"]}
	}
	return table(out, []string{"connections", "instances", "activities", "answers/s", "durable orders/s (SQL)",
		"÷ 1 activity", "÷ 1 instance", "/healthz answers/s", "÷ /healthz", "201", "409", "429", "503",
		"p50 ms", "p99 ms", "service RSS MB"}, rows)
}

func printStepsTable(path string, out io.Writer) error {
	runs, err := readRuns(path)
	if err != nil {
		return err
	}
	keys := []string{"conns", "instances", "activities", "batches", "mean_batch", "grant_ms", "verify_ms",
		"deduct_ms", "write_ms", "release_ms", "write_groups", "mean_group", "group_ms"}
	rows := make([][]string, len(runs))
	for i, r := range runs {
		for _, k := range keys {
			rows[i] = append(rows[i], r.kv[k])
		}
	}
	return table(out, []string{"connections", "instances", "activities", "batches", "buyers per batch",
		"grant", "verify", "deduct", "write", "release", "write groups", "activities per group", "group ms"}, rows)
}
