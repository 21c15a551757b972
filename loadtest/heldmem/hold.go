package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// joinAll puts users first..first+n-1 in the room's pre-queue, conc at a
// time, and closes the connections it used.
func joinAll(s *service, activity, first int64, n, conc int) error {
	path := fmt.Sprintf("/api/v1/activities/%d/queue", activity)
	next := atomic.Int64{}
	errs := make(chan error, conc)
	for range conc {
		go func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				var q struct {
					State string `json:"state"`
				}
				if err := s.call(http.MethodPost, path, first+i, nil, &q); err != nil {
					errs <- err
					return
				}
				if q.State != "prequeue" {
					errs <- fmt.Errorf("user %d joined in state %q, want prequeue", first+i, q.State)
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range conc {
		err = errors.Join(err, <-errs)
	}
	s.http.CloseIdleConnections()
	return err
}

// round is one set of n held requests, queue/mine?wait= of users
// first..first+n-1, issued together; each user asks again when its wait
// ends, as a client does, until the round stops, so n stay held however
// long the issuing takes.
type round struct {
	n       int
	started time.Time
	stop    atomic.Bool  // set once measured: answered users ask no more
	sent    atomic.Int64 // requests written to their connection
	early   atomic.Int64 // answered before wait-1s: not held
	failed  atomic.Int64 // not 200 prequeue
	retried atomic.Int64 // 503s asked again
	done    sync.WaitGroup
	errMu   sync.Mutex
	firstEr error
}

// holder issues the rounds on one transport: a round of n requests keeps
// n connections busy at once, so each request has its own keep-alive
// connection, reused by the next round (with -h2c, n streams on about
// n/250 connections).
type holder struct {
	base     string
	activity int64
	first    int64
	wait     time.Duration
	rate     int // new requests per second while a round starts
	client   *http.Client
}

func newHolder(base string, activity, first int64, wait time.Duration, rate, most int, h2c bool) *holder {
	tr := &http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: most + 1, IdleConnTimeout: 5 * time.Minute,
		DisableCompression: true}
	if h2c {
		// Streams share connections, as behind a gateway: the instance
		// opens about one per 250 held requests.
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
		// For HTTP/2 this bounds the dials in flight: without it, every
		// request of a burst that finds the connections full dials its own.
		tr.MaxConnsPerHost = 64
	}
	return &holder{base: base, activity: activity, first: first, wait: wait, rate: rate,
		client: &http.Client{Transport: tr, Timeout: wait + 30*time.Second}}
}

// start issues a round of n requests, rate a second, and returns at once.
func (h *holder) start(n int) *round {
	r := &round{n: n, started: time.Now()}
	r.done.Add(n)
	go func() {
		const tick = 10 * time.Millisecond
		per := max(h.rate/100, 1)
		t := time.NewTicker(tick)
		defer t.Stop()
		for i := 0; i < n; i += per {
			for j := i; j < min(i+per, n); j++ {
				go h.one(r, h.first+int64(j))
			}
			<-t.C
		}
	}()
	return r
}

// one issues one user's held requests, one after the other until the
// round stops, and checks each answer. A 503 (the instance's Redis read
// timed out in the issuing burst) is asked again, as a client would, up
// to 5 times in a row, and counted.
func (h *holder) one(r *round, user int64) {
	defer r.done.Done()
	var sent sync.Once
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent.Do(func() { r.sent.Add(1) }) }}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	for attempt := 1; ; attempt++ {
		code, err := h.ask(ctx, r, user)
		if code == http.StatusServiceUnavailable && attempt < 5 {
			r.retried.Add(1)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if err != nil {
			r.fail(err)
			return
		}
		if r.stop.Load() {
			return
		}
		attempt = 0
	}
}

// ask sends one queue/mine?wait= and checks that it was held and
// answered 200 prequeue; it returns the status code.
func (h *holder) ask(ctx context.Context, r *round, user int64) (int, error) {
	url := fmt.Sprintf("%s/api/v1/activities/%d/queue/mine?wait=%d", h.base, h.activity, int(h.wait/time.Second))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	t0 := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return resp.StatusCode, fmt.Errorf("user %d: %d %s", user, resp.StatusCode, body)
	}
	if time.Since(t0) < h.wait-time.Second {
		r.early.Add(1)
	}
	var q struct {
		State string `json:"state"`
	}
	if err == nil && resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(body, &q)
	}
	if err != nil {
		return resp.StatusCode, fmt.Errorf("user %d: %d %s: %w", user, resp.StatusCode, body, err)
	}
	if resp.StatusCode != http.StatusOK || q.State != "prequeue" {
		return resp.StatusCode, fmt.Errorf("user %d: %d %s, want 200 prequeue", user, resp.StatusCode, body)
	}
	return resp.StatusCode, nil
}

func (r *round) fail(err error) {
	r.failed.Add(1)
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.firstEr == nil {
		r.firstEr = err
	}
}

// err is the round's first failure, and how many failed.
func (r *round) err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.firstEr == nil {
		return nil
	}
	return fmt.Errorf("%d of %d held requests failed, the first: %w", r.failed.Load(), r.n, r.firstEr)
}

// awaitSent waits until every request of the round is written, the
// round fails, or by passes.
func (r *round) awaitSent(by time.Time) error {
	for int(r.sent.Load()) < r.n {
		if err := r.err(); err != nil {
			return err
		}
		if time.Now().After(by) {
			return fmt.Errorf("%d of %d requests sent by the deadline", r.sent.Load(), r.n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
