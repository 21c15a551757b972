package main

// The waiting-room crowd (-room): -users buyers join an activity's queue
// before its start, one after the other in a fixed order (user i is the
// i-th join sent, its "join rank"), spread over the pre-queue period and
// round-robin over the instances (user i talks to -url i mod n only). Each
// then polls GET .../queue/mine sleeping exactly the refresh_s it was told,
// buys once admitted, and polls on until a final state (done, closed,
// lapsed). A sampler reads the activity every second for the time series.
// The summary (one JSON line on stdout) judges the run: no oversell, every
// unit sold, no admitted buyer told sold_out, every user final, and the
// winners' join ranks uniform (chi-square over 10 buckets, df 9, p = 0.01).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type roomConfig struct {
	urls         []string
	activity     int64
	firstUser    int64
	users        int
	conns        int
	timeout      time.Duration
	csv, detail  string
	margin       time.Duration
	admissionTTL time.Duration
	maxWait      time.Duration
	noShow       float64       // share of admitted users who never buy and stop polling
	wait         time.Duration // queue/mine?wait= while holdable; 0: poll as told
	h2c          bool          // HTTP/2 without TLS: the users' requests as streams on shared connections
}

// chi2Critical is the chi-square critical value for 9 degrees of freedom
// at p = 0.01.
const chi2Critical = 21.67

// loopbackURLs splits a comma-separated -url list and refuses anything but
// loopback targets.
func loopbackURLs(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimRight(strings.TrimSpace(s), "/")
		if s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("-url %q: want http://127.0.0.1:PORT[,...]", s)
		}
		if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
			return nil, fmt.Errorf("-url %q: only loopback targets", s)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("-url: no URL given")
	}
	return out, nil
}

type roomRun struct {
	cfg    roomConfig
	client *http.Client
	// probe is the sampler's own client: its reads must not queue behind
	// the crowd's in the shared pool.
	probe  *http.Client
	latMu  sync.Mutex
	lat    map[string][]float64 // ms by request kind
	starts time.Time
	total  int64

	polls, joins, buys []atomic.Int64 // per instance
	secPolls           atomic.Int64   // polls in the current second
	sold               atomic.Int64
	lastSale           atomic.Int64 // unix ns of the last 201
	states             sync.Map     // state -> *atomic.Int64: users by their last state
	left               atomic.Int64 // users not final
	statusErrors       sync.Map     // code -> *atomic.Int64
}

type activityInfo struct {
	TotalStock     int64  `json:"total_stock"`
	RemainingStock int64  `json:"remaining_stock"`
	StartsAt       string `json:"starts_at"`
	EndsAt         string `json:"ends_at"`
	WaitingRoom    *struct {
		OpensAt  string `json:"opens_at"`
		Waiting  int64  `json:"waiting"`
		Admitted int64  `json:"admitted"`
	} `json:"waiting_room"`
}

func (r *roomRun) activity(ctx context.Context, client *http.Client, base string) (activityInfo, error) {
	var a activityInfo
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/v1/activities/%d", base, r.cfg.activity), nil)
	res, err := client.Do(req)
	if err != nil {
		return a, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		return a, fmt.Errorf("GET activity %d: %d %s", r.cfg.activity, res.StatusCode, body)
	}
	return a, json.Unmarshal(body, &a)
}

func (r *roomRun) count(m *sync.Map, key string, d int64) {
	v, _ := m.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(d)
}

func counts(m *sync.Map) map[string]int64 {
	out := map[string]int64{}
	m.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n != 0 {
			out[k.(string)] = n
		}
		return true
	})
	return out
}

// call sends one request and returns the status, the error code of a 4xx
// or 5xx ("" otherwise), the body and the Retry-After.
func (r *roomRun) call(ctx context.Context, kind, method, target string, uid int64) (int, string, []byte, time.Duration) {
	req, _ := http.NewRequestWithContext(ctx, method, target, nil)
	req.Header.Set("X-User-ID", strconv.FormatInt(uid, 10))
	t0 := time.Now()
	res, err := r.client.Do(req)
	ms := float64(time.Since(t0).Microseconds()) / 1000
	r.latMu.Lock()
	r.lat[kind] = append(r.lat[kind], ms)
	r.latMu.Unlock()
	if err != nil {
		return 0, "transport_error", nil, 0
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var after time.Duration
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		after = time.Duration(s) * time.Second
	}
	if res.StatusCode < 400 {
		return res.StatusCode, "", body, after
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return res.StatusCode, e.Error.Code, body, after
}

// countList is "a=1 b=2", sorted by key: a progress line a person reads.
func countList(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

func (r *roomRun) sinceStart(t time.Time) int64 { return t.Sub(r.starts).Milliseconds() }

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryable: an answer that is not final, to send again after a pause.
func retryable(status int) bool { return status == 0 || status == 429 || status == 503 }

// check refuses a room run's configuration that makes no sense.
func (rc roomConfig) check() error {
	if rc.activity < 1 || rc.users < 1 || rc.conns < 1 {
		return errors.New("-activity, -users and -conns must be positive")
	}
	if !(rc.noShow >= 0 && rc.noShow < 1) {
		return fmt.Errorf("-no-show %v: want a share from 0 to below 1", rc.noShow)
	}
	return rc.checkWait()
}

func runRoom(cfg roomConfig) error {
	if err := cfg.check(); err != nil {
		return err
	}
	n := len(cfg.urls)
	r := &roomRun{cfg: cfg, polls: make([]atomic.Int64, n), joins: make([]atomic.Int64, n), buys: make([]atomic.Int64, n),
		probe: &http.Client{Timeout: cfg.timeout}, lat: map[string][]float64{}}
	// One client, a bounded pool per instance: 20,000 users share it.
	r.client = &http.Client{Timeout: cfg.timeout + cfg.wait, Transport: cfg.transport()}
	ctx := context.Background()
	a, err := r.activity(ctx, r.client, cfg.urls[0])
	if err != nil {
		return err
	}
	if a.WaitingRoom == nil {
		return fmt.Errorf("activity %d has no waiting room", cfg.activity)
	}
	r.total = a.TotalStock
	if r.starts, err = time.Parse(time.RFC3339Nano, a.StartsAt); err != nil {
		return fmt.Errorf("starts_at %q: %w", a.StartsAt, err)
	}
	t0 := time.Now()
	window := r.starts.Add(-cfg.margin).Sub(t0)
	if window <= 0 {
		return fmt.Errorf("starts_at %s is less than -join-margin %s away: no pre-queue period left", a.StartsAt, cfg.margin)
	}
	fmt.Fprintf(os.Stderr, "crowd: %d users join activity %d (%d units) over %.1fs through %d instance(s); starts_at in %.1fs\n",
		cfg.users, cfg.activity, r.total, window.Seconds(), n, r.starts.Sub(t0).Seconds())
	ctx, cancel := context.WithDeadline(ctx, r.starts.Add(cfg.maxWait))
	defer cancel()

	users := make([]*user, cfg.users)
	stop := make(chan struct{})
	var series []sample
	var sampled sync.WaitGroup
	sampled.Go(func() { series = r.sampler(ctx, stop) })
	r.left.Store(int64(cfg.users))
	var wg sync.WaitGroup
	// The joins go out in rank order, evenly spread over the window.
	for i := range cfg.users {
		at := t0.Add(time.Duration(float64(window) * float64(i) / float64(cfg.users)))
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		u := &user{ID: cfg.firstUser + int64(i), Rank: i, URL: i % n, FirstETA: -1}
		users[i] = u
		wg.Go(func() { r.live(ctx, u) })
	}
	joinsSent := time.Now()
	fmt.Fprintf(os.Stderr, "crowd: every join sent (%.1fs before starts_at)\n", r.starts.Sub(joinsSent).Seconds())
	// Progress every 5 s while users are left.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(5 * time.Second)
progress:
	for {
		select {
		case <-done:
			break progress
		case now := <-tick.C:
			fmt.Fprintf(os.Stderr, "crowd: t=%+.0fs sold=%d users not final=%d by state: %s\n",
				now.Sub(r.starts).Seconds(), r.sold.Load(), r.left.Load(), countList(counts(&r.states)))
		}
	}
	tick.Stop()
	end := time.Now()
	close(stop)
	sampled.Wait()
	return r.report(users, series, t0, end)
}
