// Command metrictable turns what the load-test scripts measure into their
// figures and tables: the service's Prometheus scrapes (parsed with expfmt),
// wrk's output, the bench's runs and run.sh's samples. The scripts keep the
// orchestration; the parsing and the arithmetic live here, where they are
// tested.
//
//	metrictable value NAME < scrape          the value of an unlabelled metric
//	metrictable timeline BEFORE AFTER        the batch timeline between two scrapes
//	metrictable wrk FILE...                  one BENCH line of several wrk outputs
//	metrictable rate < wrk-output            wrk's Requests/sec, whole
//	metrictable ratio RUNS                   the BENCH_RATIO line of the last run
//	metrictable orders RUNS                  the orders table of every run
//	metrictable steps RUNS                   the batch-timeline table of every run
//	metrictable samples CSV                  per instance: goroutines before, peak, idle; peak RSS
//	metrictable plain < wrk-output           hz_per_s= and hz_ok= (2xx answers) of a run without a script
//	metrictable cost RUNS                    the BENCH_CPU line (µs of CPU per 2xx answer) of the last run
//	metrictable costs RUNS                   the CPU-per-answer table of every run
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "metrictable:", err)
		os.Exit(2)
	}
}

// commands maps each subcommand to what it does with its arguments, stdin
// and stdout, and the count of arguments it takes (-1: one or more).
var commands = map[string]struct {
	args int
	run  func(args []string, in io.Reader, out io.Writer) error
}{
	"value":    {1, func(a []string, in io.Reader, out io.Writer) error { return printValue(a[0], in, out) }},
	"timeline": {2, func(a []string, _ io.Reader, out io.Writer) error { return printTimeline(a[0], a[1], out) }},
	"wrk":      {-1, func(a []string, _ io.Reader, out io.Writer) error { return printMergedBench(a, out) }},
	"rate":     {0, func(_ []string, in io.Reader, out io.Writer) error { return printRate(in, out) }},
	"ratio":    {1, func(a []string, _ io.Reader, out io.Writer) error { return printRatio(a[0], out) }},
	"orders":   {1, func(a []string, _ io.Reader, out io.Writer) error { return printOrdersTable(a[0], out) }},
	"steps":    {1, func(a []string, _ io.Reader, out io.Writer) error { return printStepsTable(a[0], out) }},
	"samples":  {1, func(a []string, _ io.Reader, out io.Writer) error { return printSamples(a[0], out) }},
	"plain":    {0, func(_ []string, in io.Reader, out io.Writer) error { return printPlain(in, out) }},
	"cost":     {1, func(a []string, _ io.Reader, out io.Writer) error { return printCost(a[0], out) }},
	"costs":    {1, func(a []string, _ io.Reader, out io.Writer) error { return printCostsTable(a[0], out) }},
}

var errUsage = errors.New("usage: metrictable value|timeline|wrk|rate|ratio|orders|steps|samples|plain|cost|costs ARGS (see the package comment)")

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	cmd, ok := commands[args[0]]
	rest := args[1:]
	if !ok || (cmd.args >= 0 && len(rest) != cmd.args) || (cmd.args < 0 && len(rest) == 0) {
		return errUsage
	}
	return cmd.run(rest, in, out)
}
