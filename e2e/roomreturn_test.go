package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Units that come back to the waiting room, and the room closing after the
// sell-out, end to end.

// TestReturnedUnitsGoToTheNextInLine: with payments on, a unit that comes
// back (an unpaid order that expires, a cancel, a lapsed admission) is
// admitted to the next place in line, while a user further back is still
// told not_admitted; waiting users keep their places while an unpaid order
// could give its unit back, and the room closes once the last one is paid.
// Can fail: with a unit that comes back open to whoever asks (no admission
// checked at the purchase nor at the deduct), the users behind the next in
// line are told sold_out, not not_admitted; without the close
// (closeIfDone), the last waiting user stays waiting.
func TestReturnedUnitsGoToTheNextInLine(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	stub, env := s.pricedPayments("2s")
	env["SECKILL_ADMISSION_TTL"] = "2s"
	instances, _ := startInstances(t, s, 2, s.processEnv(env))
	a, b := instances[0], instances[1]
	act, startsAt := s.createRoom(1, time.Second)
	for u := int64(1); u <= 5; u++ {
		if q := a.queue(http.MethodPost, act, u); q.status != http.StatusOK {
			t.Fatalf("user %d joins: %d %s", u, q.status, q.code)
		}
	}
	time.Sleep(time.Until(startsAt))

	// order is the line, learnt from positions once the first is admitted.
	admitted := func(within time.Duration, users ...int64) int64 {
		t.Helper()
		end := time.Now().Add(within)
		for time.Now().Before(end) {
			for _, u := range users {
				if q := b.queue(http.MethodGet, act, u); q.state == "admitted" {
					return u
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("none of %v admitted within %v", users, within)
		return 0
	}
	left := []int64{1, 2, 3, 4, 5}
	next := func(u int64) { left = slices.DeleteFunc(left, func(v int64) bool { return v == u }) }
	// nextInLine is the waiting user with the lowest position.
	nextInLine := func() int64 {
		best, bestPos := int64(0), int64(1<<62)
		for _, u := range left {
			if q := a.queue(http.MethodGet, act, u); q.state == "waiting" && q.position < bestPos {
				best, bestPos = u, q.position
			}
		}
		return best
	}

	// 1. The first admitted buys and never pays: the order expires.
	first := admitted(5*time.Second, left...)
	next(first)
	want := nextInLine()
	if r := a.buy(act, first, nil); r.status != http.StatusCreated {
		t.Fatalf("admitted user %d buys: %d %s", first, r.status, r.raw)
	}
	for _, u := range left {
		if u == want {
			continue
		}
		if r := a.buy(act, u, nil); r.code() != "not_admitted" {
			t.Errorf("user %d behind the next in line buys while a unit is unpaid: %d %s, want not_admitted", u, r.status, r.raw)
		}
	}
	// While the order is unpaid, the others keep waiting: not closed.
	if q := a.queue(http.MethodGet, act, want); q.state != "waiting" {
		t.Errorf("next in line while the only unit is unpaid: %+v, want waiting", q)
	}
	if got := admitted(10*time.Second, left...); got != want {
		t.Errorf("after the expiry user %d was admitted, want the next in line %d", got, want)
	}
	next(want)

	// 2. The second buys and cancels.
	want2 := nextInLine()
	r := b.buy(act, want, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("user %d buys: %d %s", want, r.status, r.raw)
	}
	if c := b.do("POST", fmt.Sprintf("/api/v1/activities/%d/orders/mine/cancel", act), nil, buyer(want)); c.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", c.status, c.raw)
	}
	if got := admitted(5*time.Second, left...); got != want2 {
		t.Errorf("after the cancel user %d was admitted, want the next in line %d", got, want2)
	}
	next(want2)

	// 3. The third lets the admission lapse.
	want3 := nextInLine()
	if got := admitted(10*time.Second, left...); got != want3 {
		t.Errorf("after the lapse user %d was admitted, want the next in line %d", got, want3)
	}
	next(want3)
	if q := a.queue(http.MethodGet, act, want2); q.state != "lapsed" {
		t.Errorf("user %d who let the admission run out: %+v, want lapsed", want2, q)
	}

	// 4. It buys and pays: the last unit is sold and paid, the room closes.
	r = a.buy(act, want3, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("user %d buys: %d %s", want3, r.status, r.raw)
	}
	stub.SetPayment(r.body["order_id"].(string), "paid")
	if m := a.do("GET", fmt.Sprintf("/api/v1/activities/%d/orders/mine", act), nil, buyer(want3)); m.body["status"] != "paid" {
		t.Fatalf("after paying: %d %s", m.status, m.raw)
	}
	end := time.Now().Add(5 * time.Second)
	for _, u := range left {
		for {
			q := b.queue(http.MethodGet, act, u)
			if q.state == "closed" && q.reason == "sold_out" {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("user %d after the last unit was paid: %+v, want closed sold_out", u, q)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if q := a.queue(http.MethodPost, act, 99); q.code != "sold_out" {
		t.Errorf("a newcomer after the close: %+v, want 409 sold_out", q)
	}
}

// TestClosedWithinARefresh: payments off; after the sell-out every waiting
// user reaches closed/sold_out within one refresh_s (as last told) plus a
// second.
// Can fail: without the close (closeIfDone), waiting users stay waiting.
func TestClosedWithinARefresh(t *testing.T) {
	const users, units = 100, 10
	s := newProcessStack(t, usercheck.StubConfig{})
	instances, _ := startInstances(t, s, 2, s.processEnv(nil))
	act, startsAt := s.createRoom(units, time.Second)
	for u := int64(1); u <= users; u++ {
		if q := instances[u%2].queue(http.MethodPost, act, u); q.status != http.StatusOK {
			t.Fatalf("user %d joins: %d %s", u, q.status, q.code)
		}
	}
	time.Sleep(time.Until(startsAt))
	refresh := map[int64]time.Duration{}
	var soldOutAt time.Time
	sellBy := time.Now().Add(60 * time.Second)
	for sold := 0; sold < units; {
		if time.Now().After(sellBy) {
			t.Fatalf("%d of %d units sold in 60 s", sold, units)
		}
		for u := int64(1); u <= users; u++ {
			q := instances[u%2].queue(http.MethodGet, act, u)
			if q.state == "waiting" {
				refresh[u] = q.refresh
			}
			if q.state == "admitted" {
				if r := instances[u%2].buy(act, u, nil); r.status == http.StatusCreated {
					sold++
					soldOutAt = time.Now()
				} else {
					t.Fatalf("admitted user %d: %d %s", u, r.status, r.raw)
				}
			}
		}
	}
	for u := int64(1); u <= users; u++ {
		if _, waited := refresh[u]; !waited {
			continue
		}
		for {
			q := instances[u%2].queue(http.MethodGet, act, u)
			if q.state == "closed" && q.reason == "sold_out" {
				break
			}
			if q.state == "done" {
				break
			}
			if time.Since(soldOutAt) > refresh[u]+time.Second {
				t.Fatalf("user %d %v after the sell-out: %+v; told to come back in %v", u, time.Since(soldOutAt), q, refresh[u])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
