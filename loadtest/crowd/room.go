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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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

// queueStatus is the service's queue answer.
type queueStatus struct {
	State         string `json:"state"`
	Position      int64  `json:"position"`
	ETA           *int64 `json:"eta_s"`
	RefreshS      int64  `json:"refresh_s"`
	AdmittedUntil string `json:"admitted_until"`
	OrderID       string `json:"order_id"`
	Reason        string `json:"reason"`
}

func finalState(s string) bool { return s == "done" || s == "closed" || s == "lapsed" }

// user is one simulated buyer and what it saw.
type user struct {
	ID        int64  `json:"user_id"`
	Rank      int    `json:"join_rank"`
	URL       int    `json:"instance"`
	JoinState string `json:"join_state"` // the join's state, or its error code
	JoinMs    int64  `json:"join_ms"`    // sent, ms since starts_at (negative: before)
	Retries   int    `json:"retries"`    // answers not final (429, 503, transport) retried
	Polls     int    `json:"polls"`
	FirstPos  int64  `json:"first_position,omitempty"`
	FirstETA  int64  `json:"first_eta_s"` // -1: never told one while waiting
	ETAMs     int64  `json:"first_eta_at_ms,omitempty"`
	AdmitMs   int64  `json:"admitted_at_ms,omitempty"` // admitted_until - TTL, ms since starts_at
	SawMs     int64  `json:"saw_admitted_ms,omitempty"`
	Buy       string `json:"purchase,omitempty"` // first final purchase answer
	Buys      int    `json:"purchases"`
	BuyMs     int64  `json:"purchase_ms,omitempty"`
	Final     string `json:"final_state"`
	Reason    string `json:"reason,omitempty"`
	Trail     string `json:"trail"` // the states seen, in order, repeats folded
	PosGrew   int    `json:"position_grew,omitempty"`
	admitted  bool
	lastPos   int64
}

func (u *user) see(state string) {
	if i := strings.LastIndexByte(u.Trail, '>'); u.Trail == "" || u.Trail[i+1:] != state {
		if u.Trail != "" {
			u.Trail += ">"
		}
		u.Trail += state
	}
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

// live is one user's life: join, poll as told, buy once admitted, poll on
// until a final state.
func (r *roomRun) live(ctx context.Context, u *user) {
	base := r.cfg.urls[u.URL]
	queue := fmt.Sprintf("%s/api/v1/activities/%d/queue", base, r.cfg.activity)
	mine := queue + "/mine"
	orders := fmt.Sprintf("%s/api/v1/activities/%d/orders", base, r.cfg.activity)
	last := ""
	setState := func(s string) {
		if s != last {
			if last != "" {
				r.count(&r.states, last, -1)
			}
			r.count(&r.states, s, 1)
			last = s
		}
		u.see(s)
	}
	defer func() {
		u.Final = last
		if !finalState(last) {
			u.see("(gave up)")
		}
		r.left.Add(-1)
	}()

	// Join, retrying what is not final.
	u.JoinMs = r.sinceStart(time.Now())
	var st queueStatus
	for {
		r.joins[u.URL].Add(1)
		status, code, body, after := r.call(ctx, "join", http.MethodPost, queue, u.ID)
		if status == http.StatusOK {
			if err := json.Unmarshal(body, &st); err != nil {
				r.count(&r.statusErrors, "join: bad body", 1)
				setState("bad_answer")
				return
			}
			u.JoinState = st.State
			break
		}
		r.count(&r.statusErrors, fmt.Sprintf("join: %d %s", status, code), 1)
		if !retryable(status) || ctx.Err() != nil {
			u.JoinState = fmt.Sprintf("%d %s", status, code)
			setState("join_refused")
			return
		}
		u.Retries++
		if !sleep(ctx, max(after, time.Second)) {
			return
		}
	}

	for {
		now := time.Now()
		setState(st.State)
		switch st.State {
		case "waiting":
			if st.ETA != nil && u.FirstETA < 0 {
				u.FirstETA, u.ETAMs = *st.ETA, r.sinceStart(now)
			}
			if u.FirstPos == 0 {
				u.FirstPos = st.Position
			}
			if u.lastPos > 0 && st.Position > u.lastPos {
				u.PosGrew++
			}
			u.lastPos = st.Position
		case "admitted":
			if !u.admitted {
				u.admitted = true
				u.SawMs = r.sinceStart(now)
				if t, err := time.Parse(time.RFC3339Nano, st.AdmittedUntil); err == nil {
					u.AdmitMs = r.sinceStart(t.Add(-r.cfg.admissionTTL))
				}
			}
			if u.Buy == "" {
				u.Buys++
				r.buys[u.URL].Add(1)
				status, code, _, _ := r.call(ctx, "purchase", http.MethodPost, orders, u.ID)
				answer := strconv.Itoa(status)
				if code != "" {
					answer += " " + code
				}
				if status == http.StatusCreated {
					r.sold.Add(1)
					r.lastSale.Store(time.Now().UnixNano())
				}
				if !retryable(status) {
					u.Buy, u.BuyMs = answer, r.sinceStart(time.Now())
				} else {
					r.count(&r.statusErrors, "purchase: "+answer, 1)
					u.Retries++
				}
			}
		default:
			if finalState(st.State) {
				u.Reason = st.Reason
				return
			}
		}
		// Sleep exactly what the service said; an answer without a
		// refresh_s (none should lack one) waits a second.
		d := time.Duration(st.RefreshS) * time.Second
		if d <= 0 {
			r.count(&r.statusErrors, "answer without refresh_s: "+st.State, 1)
			d = time.Second
		}
		for {
			if !sleep(ctx, d) {
				return
			}
			r.polls[u.URL].Add(1)
			r.secPolls.Add(1)
			u.Polls++
			status, code, body, after := r.call(ctx, "poll", http.MethodGet, mine, u.ID)
			if status == http.StatusOK {
				var next queueStatus
				if err := json.Unmarshal(body, &next); err == nil {
					st = next
					break
				}
				code = "bad body"
			}
			r.count(&r.statusErrors, fmt.Sprintf("poll: %d %s", status, code), 1)
			if !retryable(status) {
				setState(fmt.Sprintf("poll_%d_%s", status, code))
				return
			}
			u.Retries++
			d = max(after, time.Second)
		}
	}
}

// sample is one second of the time series.
type sample struct {
	t                          float64 // seconds since starts_at
	waiting, admitted, remain  int64
	polls, sold                int64
	prequeue, waitingU, admitU int64 // the crowd's users by last state
	final                      int64
}

func (r *roomRun) stateCount(s string) int64 {
	if v, ok := r.states.Load(s); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// sampler reads the activity every second until stop is closed.
func (r *roomRun) sampler(ctx context.Context, stop <-chan struct{}) []sample {
	var out []sample
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-ctx.Done():
			return out
		case now := <-t.C:
			s := sample{t: now.Sub(r.starts).Seconds(), polls: r.secPolls.Swap(0), sold: r.sold.Load(),
				prequeue: r.stateCount("prequeue"), waitingU: r.stateCount("waiting"), admitU: r.stateCount("admitted"),
				final: r.stateCount("done") + r.stateCount("closed") + r.stateCount("lapsed"), waiting: -1, admitted: -1, remain: -1}
			actx, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
			if a, err := r.activity(actx, r.probe, r.cfg.urls[0]); err == nil {
				s.remain = a.RemainingStock
				if a.WaitingRoom != nil {
					s.waiting, s.admitted = a.WaitingRoom.Waiting, a.WaitingRoom.Admitted
				}
			}
			cancel()
			out = append(out, s)
		}
	}
}

func runRoom(cfg roomConfig) error {
	if cfg.activity < 1 || cfg.users < 1 || cfg.conns < 1 {
		return errors.New("-activity, -users and -conns must be positive")
	}
	n := len(cfg.urls)
	r := &roomRun{cfg: cfg, polls: make([]atomic.Int64, n), joins: make([]atomic.Int64, n), buys: make([]atomic.Int64, n),
		probe: &http.Client{Timeout: cfg.timeout}, lat: map[string][]float64{}}
	// One client, a bounded pool per instance: 20,000 users share it.
	r.client = &http.Client{Timeout: cfg.timeout, Transport: &http.Transport{
		MaxConnsPerHost: cfg.conns, MaxIdleConnsPerHost: cfg.conns, IdleConnTimeout: 90 * time.Second,
	}}
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
			fmt.Fprintf(os.Stderr, "crowd: t=%+.0fs sold=%d users not final=%d by state=%v\n",
				now.Sub(r.starts).Seconds(), r.sold.Load(), r.left.Load(), counts(&r.states))
		}
	}
	tick.Stop()
	end := time.Now()
	close(stop)
	sampled.Wait()
	return r.report(users, series, t0, end)
}

// report writes the CSV and the detail file, and prints the summary.
func (r *roomRun) report(users []*user, series []sample, t0, end time.Time) error {
	cfg := r.cfg
	if cfg.csv != "" {
		var b bytes.Buffer
		b.WriteString("t_s,waiting,admitted,remaining_stock,polls,sold,users_prequeue,users_waiting,users_admitted,users_final\n")
		for _, s := range series {
			fmt.Fprintf(&b, "%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", s.t, s.waiting, s.admitted, s.remain, s.polls, s.sold,
				s.prequeue, s.waitingU, s.admitU, s.final)
		}
		if err := os.WriteFile(cfg.csv, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if cfg.detail != "" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for _, u := range users {
			_ = enc.Encode(u)
		}
		if err := os.WriteFile(cfg.detail, b.Bytes(), 0o644); err != nil {
			return err
		}
	}

	var sold, toldSoldOut, toldNotAdmitted, nonFinal, lateJoins, posGrew, admitted, etaN, etaOK int64
	buyCodes, finals, joinStates := map[string]int{}, map[string]int{}, map[string]int{}
	var buckets [10]float64
	var ratios []float64
	var stuck []*user
	for _, u := range users {
		joinStates[u.JoinState]++
		fin := u.Final
		if u.Reason != "" {
			fin += " " + u.Reason
		}
		finals[fin]++
		if u.JoinState != "prequeue" {
			lateJoins++
		}
		if !finalState(u.Final) {
			nonFinal++
			stuck = append(stuck, u)
		}
		posGrew += int64(u.PosGrew)
		if u.Buy != "" {
			buyCodes[u.Buy]++
		}
		switch u.Buy { // every purchase here was made while admitted
		case "409 sold_out":
			toldSoldOut++
		case "403 not_admitted":
			toldNotAdmitted++
		}
		if u.Buy == "201" {
			sold++
			buckets[u.Rank*10/len(users)]++
		}
		if u.admitted {
			admitted++
			if u.FirstETA >= 0 && u.AdmitMs != 0 {
				etaN++
				took := float64(u.AdmitMs-u.ETAMs) / 1000
				eta := float64(u.FirstETA)
				if math.Abs(took-eta) <= 0.5*eta {
					etaOK++
				}
				if eta > 0 {
					ratios = append(ratios, took/eta)
				}
			}
		}
	}
	chi2, p := 0.0, 1.0
	if sold > 0 {
		exp := float64(sold) / 10
		for _, o := range buckets {
			chi2 += (o - exp) * (o - exp) / exp
		}
		p = chi2Survival(chi2, 9)
	}
	// Below 50 winners a bucket expects fewer than 5: the test says
	// nothing, and is not held against the run.
	fair := sold < 50 || chi2 < chi2Critical
	slices.Sort(ratios)
	q := func(f float64) float64 {
		if len(ratios) == 0 {
			return 0
		}
		return round2(ratios[int(f*float64(len(ratios)-1))])
	}
	dur := end.Sub(t0).Seconds()
	perURL := make([]map[string]any, len(cfg.urls))
	for i, u := range cfg.urls {
		perURL[i] = map[string]any{"url": u, "polls": r.polls[i].Load(), "polls_per_s": round2(float64(r.polls[i].Load()) / dur),
			"joins": r.joins[i].Load(), "purchases": r.buys[i].Load()}
	}
	var peakPolls int64
	for _, s := range series {
		peakPolls = max(peakPolls, s.polls)
	}
	latency := map[string]any{}
	for kind, l := range r.lat {
		slices.Sort(l)
		at := func(f float64) float64 { return round2(l[int(f*float64(len(l)-1))]) }
		latency[kind] = map[string]any{"n": len(l), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1)}
	}
	sellOut := -1.0
	if ns := r.lastSale.Load(); ns > 0 {
		sellOut = round2(time.Unix(0, ns).Sub(r.starts).Seconds())
	}
	var failures []string
	if sold > r.total {
		failures = append(failures, fmt.Sprintf("OVERSOLD: %d units sold of %d", sold, r.total))
	}
	if sold < r.total {
		failures = append(failures, fmt.Sprintf("%d units sold of %d: not all sold", sold, r.total))
	}
	if toldSoldOut > 0 {
		failures = append(failures, fmt.Sprintf("%d admitted buyers told sold_out", toldSoldOut))
	}
	if nonFinal > 0 {
		failures = append(failures, fmt.Sprintf("%d users not in a final state", nonFinal))
	}
	if !fair {
		failures = append(failures, fmt.Sprintf("fairness: chi-square %.2f (df 9, critical %.2f at p=0.01) over %d winners", chi2, chi2Critical, sold))
	}
	for i, u := range stuck {
		if i == 10 {
			break
		}
		b, _ := json.Marshal(u)
		fmt.Fprintf(os.Stderr, "crowd: not final: %s\n", b)
	}
	summary := map[string]any{
		"users": len(users), "total": r.total, "units_sold": sold, "admitted_told_sold_out": toldSoldOut,
		"admitted_told_not_admitted": toldNotAdmitted,
		"non_final":                  nonFinal, "users_admitted": admitted, "join_states": joinStates, "late_joins": lateJoins,
		"purchase_answers": buyCodes, "final_states": finals, "position_grew": posGrew,
		"errors_retried": counts(&r.statusErrors),
		"fairness": map[string]any{"chi2": round2(chi2), "df": 9, "p_value": round4(p), "critical_p01": chi2Critical,
			"buckets": buckets, "pass": fair, "tested": sold >= 50},
		"eta": map[string]any{"admitted_with_eta": etaN, "within_50pct": etaOK,
			"share":             round4(float64(etaOK) / math.Max(float64(etaN), 1)),
			"took_over_eta_p10": q(0.10), "p50": q(0.50), "p90": q(0.90)},
		"instances": perURL, "peak_polls_per_s": peakPolls, "latency": latency, "duration_s": round2(dur),
		"sell_out_s": sellOut, "join_window_s": round2(r.starts.Add(-cfg.margin).Sub(t0).Seconds()),
		"pass": len(failures) == 0, "failures": failures,
	}
	if err := json.NewEncoder(os.Stdout).Encode(summary); err != nil {
		return err
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// chi2Survival is P(X >= x) for X chi-square with k degrees of freedom:
// the regularized upper incomplete gamma Q(k/2, x/2).
func chi2Survival(x float64, k int) float64 {
	a, z := float64(k)/2, x/2
	if z <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if z < a+1 { // series for P, then Q = 1 - P
		sum, term := 1/a, 1/a
		for n := 1; n < 500; n++ {
			term *= z / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-z+a*math.Log(z)-lg)
	}
	// continued fraction for Q (Lentz)
	const tiny = 1e-300
	b := z + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 500; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-z+a*math.Log(z)-lg) * h
}
