package e2e_test

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Held queue/mine requests (docs/API.md "Waiting for a change"), end to
// end: two service processes on one room; every request is held on the
// instance that did not admit or sell.

// heldAnswer is a held queue/mine's answer and when it came.
type heldAnswer struct {
	q  queueStatus
	at time.Time
}

// holdMine sends queue/mine?wait= for the user to the stack's instance and
// returns where its answer will come.
func (s *stack) holdMine(activity, user int64, wait int) <-chan heldAnswer {
	out := make(chan heldAnswer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/activities/%d/queue/mine?wait=%d", s.url, activity, wait), nil)
		r := doRaw(s.t, s.client, withHeaders(req, buyer(user)))
		q := queueStatus{status: r.status, code: r.code()}
		q.state, _ = r.body["state"].(string)
		q.reason, _ = r.body["reason"].(string)
		if cc := r.header.Get("Cache-Control"); r.status == http.StatusOK && cc != "no-store" {
			s.t.Errorf("a held answer's Cache-Control %q, want no-store", cc)
		}
		out <- heldAnswer{q, time.Now()}
	}()
	return out
}

func withHeaders(req *http.Request, h map[string]string) *http.Request {
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return req
}

// awaitHeld waits for a held answer, failing past limit after since.
func awaitHeld(t *testing.T, got <-chan heldAnswer, since time.Time, limit time.Duration, what string) queueStatus {
	t.Helper()
	select {
	case a := <-got:
		if d := a.at.Sub(since); d > limit {
			t.Errorf("%s: answered %v after, want within %v (%+v)", what, d.Round(time.Millisecond), limit, a.q)
		}
		return a.q
	case <-time.After(40 * time.Second):
		t.Fatalf("%s: no answer in 40 s", what)
	}
	return queueStatus{}
}

// TestLongPollAcrossInstances: one unit, three users; instance 1 holds
// their requests. The draw answers the pre-queue at the start; the
// admission (instance 0's admitter, or 1's) reaches the admitted user's
// held request; the last unit sold on instance 0 closes the room, and the
// others' held requests on instance 1 hear closed/sold_out within a second
// and a half of the sale (the close waits for the database's count).
// Can fail: without the notes, every held request waits its 20 s.
func TestLongPollAcrossInstances(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	in, _ := startInstances(t, s, 2, s.processEnv(nil))
	act, startsAt := s.createRoom(1, 2*time.Second)
	users := []int64{1, 2, 3}
	for _, u := range users {
		if q := in[0].queue(http.MethodPost, act, u); q.status != http.StatusOK || q.state != "prequeue" {
			t.Fatalf("user %d joins: %+v", u, q)
		}
	}
	held := map[int64]<-chan heldAnswer{}
	for _, u := range users {
		held[u] = in[1].holdMine(act, u, 20)
	}
	admitted := int64(0)
	for _, u := range users {
		q := awaitHeld(t, held[u], startsAt, 1500*time.Millisecond, fmt.Sprintf("user %d held over the draw", u))
		if q.state == "admitted" {
			admitted = u
		}
	}
	for admitted == 0 && time.Since(startsAt) < 5*time.Second {
		for _, u := range users {
			if in[0].queue(http.MethodGet, act, u).state == "admitted" {
				admitted = u
			}
		}
	}
	if admitted == 0 {
		t.Fatal("nobody admitted 5 s after the start")
	}
	for _, u := range users {
		if u != admitted {
			held[u] = in[1].holdMine(act, u, 20)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if r := in[0].buy(act, admitted, nil); r.status != http.StatusCreated {
		t.Fatalf("admitted user %d buys: %d %s", admitted, r.status, r.raw)
	}
	sold := time.Now()
	for _, u := range users {
		if u == admitted {
			continue
		}
		q := awaitHeld(t, held[u], sold, 2500*time.Millisecond, fmt.Sprintf("user %d held over the sell-out", u))
		if q.state != "closed" || q.reason != "sold_out" {
			t.Errorf("user %d held over the sell-out: %+v, want closed/sold_out", u, q)
		}
	}
}

// TestShutdownAnswersHeldRequests: SIGTERM answers a held request at once
// with the current status, and the process exits well within the shutdown
// timeout.
// Can fail: without the server's RegisterOnShutdown(ReleaseHolds), the
// held request keeps the shutdown waiting until its timeout cuts it.
func TestShutdownAnswersHeldRequests(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	p := startProcess(t, s.processEnv(map[string]string{"SECKILL_SHUTDOWN_TIMEOUT": "10s"}))
	s.url = p.url
	act, _ := s.createRoom(1, time.Minute)
	if q := s.queue(http.MethodPost, act, 1); q.status != http.StatusOK {
		t.Fatalf("join: %+v", q)
	}
	got := s.holdMine(act, 1, 30)
	time.Sleep(500 * time.Millisecond)
	p.signal(syscall.SIGTERM)
	signalled := time.Now()
	if q := awaitHeld(t, got, signalled, time.Second, "a held request at SIGTERM"); q.status != http.StatusOK || q.state != "prequeue" {
		t.Errorf("held answer at SIGTERM: %+v, want 200 prequeue", q)
	}
	if !p.wait(5 * time.Second) {
		t.Errorf("process still running 5 s after SIGTERM")
	}
}
