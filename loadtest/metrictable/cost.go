package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// The CPU of a bench run (loadtest/bench.sh reads /proc/PID/stat before and
// after it): the ticks each process spent, per 2xx answer, in µs. A run's
// purchases are cpu_svc=, cpu_db=, cpu_redis= and cpu_gen= (wrk); its
// /healthz run, with --floor, the same with hz_ and hz_ok= answers.

// processes are the keys of a run's ticks, after cpu_ or hz_, in the order
// they are printed.
var processes = []string{"svc", "db", "redis", "gen"}

// okAnswers are the 2xx answers of a run's purchases (its code_2xx fields).
func okAnswers(kv map[string]string) float64 {
	var n float64
	for k, v := range kv {
		if strings.HasPrefix(k, "code_2") {
			n += number(v)
		}
	}
	return n
}

// perAnswer is the µs of CPU per answer that ticks (of clk_tck a second)
// make over answers; 0 when there is no tick rate or no answer.
func perAnswer(ticks, clkTck, answers float64) float64 {
	if clkTck <= 0 || answers <= 0 {
		return 0
	}
	return ticks * 1e6 / clkTck / answers
}

// runCost is a run's µs of CPU per 2xx answer, by process (processes'
// order), of the purchases and of /healthz; nil where not measured.
type runCost struct {
	buy, healthz []float64
}

func costOf(kv map[string]string) runCost {
	clk := number(kv["clk_tck"])
	measure := func(prefix string, answers float64) []float64 {
		if _, ok := kv[prefix+"svc"]; !ok || answers <= 0 {
			return nil
		}
		us := make([]float64, len(processes))
		for i, p := range processes {
			us[i] = perAnswer(number(kv[prefix+p]), clk, answers)
		}
		return us
	}
	return runCost{buy: measure("cpu_", okAnswers(kv)), healthz: measure("hz_", number(kv["hz_ok"]))}
}

// sum is the box's µs: every process's.
func sum(us []float64) float64 {
	var s float64
	for _, u := range us {
		s += u
	}
	return s
}

// micro prints µs to one place, "-" when not measured.
func micro(us []float64, i int) string {
	if us == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", us[i])
}

func microOf(us []float64, v float64) string {
	if us == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// vsHealthz is the service's µs per purchase ÷ its µs per /healthz.
func (c runCost) vsHealthz() string {
	if c.buy == nil || c.healthz == nil {
		return "-"
	}
	return ratio(c.buy[0], c.healthz[0])
}

// printCost prints the BENCH_CPU line of the last run.
func printCost(path string, out io.Writer) error {
	runs, err := readRuns(path)
	if err != nil {
		return err
	}
	r := runs[len(runs)-1]
	c := costOf(r.kv)
	_, err = fmt.Fprintf(out, "BENCH_CPU conns=%s instances=%s activities=%s us_per_2xx svc=%s db=%s redis=%s gen=%s box=%s healthz_svc=%s healthz_box=%s svc_vs_healthz=%s\n",
		r.kv["conns"], r.kv["instances"], r.kv["activities"], micro(c.buy, 0), micro(c.buy, 1), micro(c.buy, 2), micro(c.buy, 3),
		microOf(c.buy, sum(c.buy)), micro(c.healthz, 0), microOf(c.healthz, sum(c.healthz)), c.vsHealthz())
	return err
}

func printCostsTable(path string, out io.Writer) error {
	runs, err := readRuns(path)
	if err != nil {
		return err
	}
	rows := make([][]string, len(runs))
	for i, r := range runs {
		c := costOf(r.kv)
		var dbRedis []float64
		if c.buy != nil {
			dbRedis = []float64{c.buy[1] + c.buy[2]}
		}
		rows[i] = []string{r.kv["conns"], r.kv["instances"], r.kv["activities"], fmt.Sprint(int64(okAnswers(r.kv))),
			"**" + micro(c.buy, 0) + "**", micro(c.buy, 1), micro(c.buy, 2), micro(dbRedis, 0), micro(c.buy, 3), microOf(c.buy, sum(c.buy)),
			orDash(r.kv["hz_ok"]), micro(c.healthz, 0), microOf(c.healthz, sum(c.healthz)), c.vsHealthz()}
	}
	return table(out, []string{"connections", "instances", "activities", "2xx answers", "service µs", "MariaDB µs",
		"Redis µs", "MariaDB + Redis µs", "wrk µs", "box µs", "/healthz 2xx", "/healthz service µs", "/healthz box µs",
		"service ÷ /healthz"}, rows)
}

// printPlain reads wrk's own output (no script) and prints hz_per_s= (its
// Requests/sec, whole) and hz_ok= (its requests less the non-2xx ones).
func printPlain(in io.Reader, out io.Writer) error {
	var rate, requests, bad float64
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "Requests/sec:":
			rate = number(f[1])
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			requests = number(f[0])
		case len(f) >= 4 && strings.Join(f[:3], " ") == "Non-2xx or 3xx":
			bad = number(f[len(f)-1])
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the wrk output: %w", err)
	}
	_, err := fmt.Fprintf(out, "hz_per_s=%d hz_ok=%d\n", int64(rate), int64(requests-bad))
	return err
}
