// Command heldmem measures what the waiting room's held requests
// (queue/mine?wait=S, docs/API.md "Waiting for a change: long poll") cost
// one service instance: its memory per held request, from VmRSS against
// the number held, and the Redis commands it sends while they are held and
// nothing changes, against none held.
//
// It starts the instance itself (-seckill, `serve`, with this process's
// SECKILL_* environment: the database, key prefix, admin token and limits
// loadtest/heldmem.sh sets) on free loopback ports, the public one and an
// admin listener, reaching Redis through a proxy of its own that counts
// the instance's commands by name (a shared Redis's INFO counts every
// client; its total_commands_processed is reported beside, as
// redis_all_per_s). It creates an activity whose room is open and whose
// sale starts in two hours, and joins the largest count of -held users:
// all stay in the pre-queue, so nothing changes.
//
// Then, for each count N of -held, in order, it issues N
// queue/mine?wait=-wait requests, -rate a second, each on its own
// keep-alive connection (with -h2c, as streams on shared connections; the
// previous count's connections are reused; a 503 of the issuing burst is
// asked again, and counted). A user whose wait ends asks again, as a
// client does, so N stay held however long the issuing takes. Once all
// are written and the instance's goroutines have settled, it waits
// -settle, then reads VmRSS (/proc/PID/status), the Go heap and stacks in
// use and the goroutines (/metrics), and counts the commands over -window.
// At the largest count, still held, it reads the heap and stacks again
// after a forced GC (pprof's heap?gc=1 on the admin listener, the profile
// to -heap-profile): what the held requests keep live. It then stops the
// users, waits for every answer (200 prequeue, none before its wait) and
// goes on to the next count. N = 0 measures the window with nothing held.
//
// One JSON line on stdout per count, then one with the slope of RSS in KB
// per held request (least squares); a table on stderr. Exit 1 when a
// request failed or was not held, not on a missed target: this is a
// benchmark.
//
//	loadtest/heldmem.sh [-held 0,2000,5000,10000,15000] [-window 20s]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "heldmem:", err)
		os.Exit(1)
	}
}

type config struct {
	bin, redis, log string
	heapProfile     string
	held            []int
	wait            time.Duration
	window, settle  time.Duration
	quiet           time.Duration
	rate, joinConns int
	firstUser       int64
	targetKB        float64
	h2c             bool
}

func parseFlags() (config, error) {
	var c config
	held := flag.String("held", "0,2000,5000,10000,15000", "counts of held requests, measured in this order")
	flag.StringVar(&c.bin, "seckill", "", "the service's binary (go build ./cmd/seckill)")
	flag.StringVar(&c.redis, "redis", "127.0.0.1:6379", "Redis the instance uses, through the counting proxy")
	flag.StringVar(&c.log, "log", "heldmem-seckill.log", "the instance's log")
	flag.StringVar(&c.heapProfile, "heap-profile", "", "where to write the instance's heap profile at the largest count (none: \"\")")
	flag.DurationVar(&c.wait, "wait", 30*time.Second, "each request's ?wait= (whole seconds, 1s-30s)")
	flag.DurationVar(&c.window, "window", 20*time.Second, "how long Redis commands are counted at each count")
	flag.DurationVar(&c.settle, "settle", 3*time.Second, "pause between the last request written and the window")
	flag.DurationVar(&c.quiet, "quiet", 10*time.Second, "pause after the joins, before the first count")
	flag.IntVar(&c.rate, "rate", 1500, "held requests issued a second while a count starts")
	flag.IntVar(&c.joinConns, "join-conns", 32, "joins in flight")
	flag.Int64Var(&c.firstUser, "first-user", 1000000, "user id of the first user")
	flag.Float64Var(&c.targetKB, "target-kb", 24, "the target: most KB of RSS per held request")
	flag.BoolVar(&c.h2c, "h2c", false, "hold the requests as HTTP/2 streams without TLS (a gateway's upstream), up to 250 a connection, instead of a connection each")
	flag.Parse()
	for _, f := range strings.Split(*held, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return c, fmt.Errorf("-held %q: counts from 0 up, comma-separated", *held)
		}
		c.held = append(c.held, n)
	}
	switch {
	case c.bin == "":
		return c, fmt.Errorf("-seckill: the service's binary is needed")
	case c.wait < time.Second || c.wait > 30*time.Second || c.wait%time.Second != 0:
		return c, fmt.Errorf("-wait %v: whole seconds from 1s to 30s", c.wait)
	case c.rate < 1 || c.joinConns < 1:
		return c, fmt.Errorf("-rate and -join-conns must be positive")
	}
	return c, nil
}

func run() error {
	cfg, err := parseFlags()
	if err != nil {
		return err
	}
	ctr, err := newCounter(cfg.redis)
	if err != nil {
		return err
	}
	defer ctr.close()
	svc, err := startService(cfg.bin, ctr.addr(), cfg.log)
	if err != nil {
		return err
	}
	defer svc.stop()
	rdb := redis.NewClient(&redis.Options{Addr: cfg.redis})
	defer func() { _ = rdb.Close() }()
	activity, err := svc.createRoom()
	if err != nil {
		return fmt.Errorf("the activity: %w", err)
	}
	most := slices.Max(cfg.held)
	t0 := time.Now()
	if err := joinAll(svc, activity, cfg.firstUser, most, cfg.joinConns); err != nil {
		return fmt.Errorf("joins: %w", err)
	}
	logf("activity %d: %d users joined in %.1f s; quiet for %v", activity, most, time.Since(t0).Seconds(), cfg.quiet)
	time.Sleep(cfg.quiet)
	h := newHolder(svc.base, activity, cfg.firstUser, cfg.wait, cfg.rate, most, cfg.h2c)
	m := &meter{svc: svc, ctr: ctr, rdb: rdb}
	var steps []step
	for _, n := range cfg.held {
		st, err := holdAndMeasure(cfg, h, m, n)
		if err != nil {
			return fmt.Errorf("%d held: %w", n, err)
		}
		steps = append(steps, st)
		if err := json.NewEncoder(os.Stdout).Encode(st); err != nil {
			return err
		}
		logf("%d held: RSS %d KB, %d goroutines, %.1f commands/s from the instance, %.1f/s in all Redis", n, st.RSSKB,
			st.Runtime.Goroutines, st.CmdsPerS, st.RedisAllPerS)
	}
	return report(cfg, steps)
}

// holdAndMeasure holds n requests (none for 0) and measures a window
// while they are held.
func holdAndMeasure(cfg config, h *holder, m *meter, n int) (step, error) {
	if n == 0 {
		return m.measure(0, cfg.window)
	}
	r := h.start(n)
	// Every request written, at the rate, with a wait's slack: those
	// answered meanwhile have asked again.
	sendBy := r.started.Add(time.Duration(n)*time.Second/time.Duration(cfg.rate) + cfg.wait)
	if err := r.awaitSent(sendBy); err != nil {
		return step{}, err
	}
	m.awaitSettled(10 * time.Second)
	time.Sleep(cfg.settle)
	st, err := m.measure(n, cfg.window)
	if err != nil {
		r.stop.Store(true)
		return st, err
	}
	if n == slices.Max(cfg.held) {
		// Once, at the largest count, while its requests are held: a
		// forced GC would let the next count reuse the memory it frees
		// and grow RSS less than a crowd would.
		mem, err := m.svc.afterGC(cfg.heapProfile)
		if err != nil {
			r.stop.Store(true)
			return st, fmt.Errorf("the forced GC: %w", err)
		}
		st.AfterGC = &mem
	}
	r.stop.Store(true)
	r.done.Wait()
	if e := r.early.Load(); e > 0 {
		return st, fmt.Errorf("%d requests were answered before their wait: not held (SECKILL_ROOM_MAX_HELD?)", e)
	}
	st.Retried = r.retried.Load()
	return st, r.err()
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "heldmem %s: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// openFileLimit is this process's RLIMIT_NOFILE, soft and hard.
func openFileLimit() (uint64, uint64) {
	var l syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur, l.Max
}

// report prints the steps as JSON lines and a table, and the slope.
func report(cfg config, steps []step) error {
	var xs, rss, inuse []float64
	for _, st := range steps {
		xs = append(xs, float64(st.Held))
		rss = append(rss, float64(st.RSSKB))
		inuse = append(inuse, float64(st.Runtime.HeapInuse+st.Runtime.StackInuse))
	}
	perHeld, perHeldInuse := slope(xs, rss), slope(xs, inuse)
	livePerHeld := 0.0
	if first, last := steps[0], steps[len(steps)-1]; last.AfterGC != nil && first.Held == 0 && last.Held > 0 {
		livePerHeld = float64(last.AfterGC.HeapInuse+last.AfterGC.StackInuse-first.Runtime.HeapInuse-first.Runtime.StackInuse) /
			float64(last.Held)
	}
	soft, hard := openFileLimit()
	fmt.Fprintf(os.Stderr, "| held | RSS MB | heap+stacks MB | goroutines | instance's Redis commands/s | all of Redis, commands/s |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, st := range steps {
		fmt.Fprintf(os.Stderr, "| %d | %.1f | %.1f | %d | %.1f | %.0f |\n", st.Held, float64(st.RSSKB)/1024,
			float64(st.Runtime.HeapInuse+st.Runtime.StackInuse)/1024, st.Runtime.Goroutines, st.CmdsPerS, st.RedisAllPerS)
	}
	fmt.Fprintf(os.Stderr, "RSS: %.1f KB per held request (least squares; target %.0f); heap+stacks in use: %.1f KB; "+
		"live after a forced GC at the largest count, over none held: %.1f KB\n", perHeld, cfg.targetKB, perHeldInuse, livePerHeld)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"rss_kb_per_held": round1(perHeld), "inuse_kb_per_held": round1(perHeldInuse),
		"live_kb_per_held_after_gc": round1(livePerHeld),
		"target_kb_per_held":        cfg.targetKB, "within_target": perHeld <= cfg.targetKB,
		"most_held": slices.Max(xs), "open_files_soft": soft, "open_files_hard": hard,
	})
}

// slope is the least-squares slope of ys over xs (0 for fewer than two
// distinct xs).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
