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
// first..first+n-1, issued together and each answered when its wait ends.
type round struct {
	n       int
	started time.Time
	sent    atomic.Int64 // requests written to their connection
	early   atomic.Int64 // answered before wait-1s: not held
	failed  atomic.Int64 // not 200 prequeue
	done    sync.WaitGroup
	errMu   sync.Mutex
	firstEr error
}

// holder issues the rounds on one transport: a round of n requests keeps
// n connections busy at once, so each request has its own keep-alive
// connection, reused by the next round.
type holder struct {
	base     string
	activity int64
	first    int64
	wait     time.Duration
	rate     int // new requests per second while a round starts
	client   *http.Client
}

func newHolder(base string, activity, first int64, wait time.Duration, rate, most int) *holder {
	tr := &http.Transport{MaxIdleConns: 0, MaxIdleConnsPerHost: most + 1, IdleConnTimeout: 5 * time.Minute,
		DisableCompression: true}
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

// one issues one held request and checks its answer.
func (h *holder) one(r *round, user int64) {
	defer r.done.Done()
	url := fmt.Sprintf("%s/api/v1/activities/%d/queue/mine?wait=%d", h.base, h.activity, int(h.wait/time.Second))
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { r.sent.Add(1) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
	if err != nil {
		r.fail(err)
		return
	}
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	t0 := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		r.fail(err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if time.Since(t0) < h.wait-time.Second {
		r.early.Add(1)
	}
	var q struct {
		State string `json:"state"`
	}
	if err == nil && resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(body, &q)
	}
	if err != nil || resp.StatusCode != http.StatusOK || q.State != "prequeue" {
		r.fail(fmt.Errorf("user %d: %d %s %v", user, resp.StatusCode, body, err))
	}
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
