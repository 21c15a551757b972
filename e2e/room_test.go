package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// The waiting room (docs/API.md "Waiting room"), end to end: real service
// processes on real Redis and MariaDB, two instances sharing one room.

// queueStatus is a queue answer.
type queueStatus struct {
	status   int
	code     string
	state    string
	position int64
	refresh  time.Duration
	orderID  string
	reason   string
}

func (s *stack) queue(method string, activity, user int64) queueStatus {
	s.t.Helper()
	path := fmt.Sprintf("/api/v1/activities/%d/queue", activity)
	if method == http.MethodGet {
		path += "/mine"
	}
	r := s.do(method, path, nil, buyer(user))
	q := queueStatus{status: r.status, code: r.code()}
	if r.status == http.StatusOK {
		q.state, _ = r.body["state"].(string)
		pos, _ := r.body["position"].(float64)
		ref, _ := r.body["refresh_s"].(float64)
		q.position, q.refresh = int64(pos), time.Duration(ref)*time.Second
		q.orderID, _ = r.body["order_id"].(string)
		q.reason, _ = r.body["reason"].(string)
	}
	return q
}

// createRoom creates an activity of total units with a waiting room open
// now, starting after startsIn.
func (s *stack) createRoom(total int64, startsIn time.Duration) (id int64, startsAt time.Time) {
	s.t.Helper()
	now := time.Now().UTC()
	startsAt = now.Add(startsIn).Truncate(time.Millisecond)
	r := s.do("POST", "/admin/v1/activities", s.withPrice(map[string]any{
		"name": "room", "total_stock": total,
		"starts_at": startsAt.Format(time.RFC3339Nano), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
		"waiting_room": map[string]any{"opens_at": now.Add(-time.Minute).Format(time.RFC3339)},
	}), admin())
	if r.status != http.StatusCreated {
		s.t.Fatalf("create an activity with a waiting room: %d %s", r.status, r.raw)
	}
	return int64(r.body["id"].(float64)), startsAt
}

// rounds runs do for every user, workers at a time, round after round, on
// the users for whom it returned false, pausing between rounds, until all
// are done or the deadline passes; it returns those left.
func rounds(users []int64, workers int, pause time.Duration, deadline time.Time, do func(u int64) (done bool)) []int64 {
	pending := slices.Clone(users)
	for len(pending) > 0 && time.Now().Before(deadline) {
		var mu sync.Mutex
		var next []int64
		var wg sync.WaitGroup
		work := make(chan int64)
		for range workers {
			wg.Go(func() {
				for u := range work {
					if !do(u) {
						mu.Lock()
						next = append(next, u)
						mu.Unlock()
					}
				}
			})
		}
		for _, u := range pending {
			work <- u
		}
		close(work)
		wg.Wait()
		if pending = next; len(pending) > 0 {
			time.Sleep(pause)
		}
	}
	return pending
}

// TestWaitingRoomAnswers: the contract's answers around the queue, on a
// real process: a user the user check rejects gets 403 and no place; a
// join spends the per-user purchase limit; an activity without a room is
// no_waiting_room; a room not yet open is not_open; a room is turned on
// before the start only (already_started after); turned off, anyone buys
// without an admission, while with it on a buyer without one is
// not_admitted.
func TestWaitingRoomAnswers(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{RejectUsers: []int64{66}})
	p := startProcess(t, s.processEnv(map[string]string{"SECKILL_RATE_PER_USER": "1"}))
	s.url = p.url

	act, startsAt := s.createRoom(5, 2*time.Second)
	if q := s.queue(http.MethodPost, act, 66); q.status != http.StatusForbidden || q.code != "user_rejected" {
		t.Errorf("rejected user joins: %+v, want 403 user_rejected", q)
	}
	if q := s.queue(http.MethodGet, act, 66); q.status != http.StatusNotFound || q.code != "not_in_queue" {
		t.Errorf("rejected user's place: %+v, want 404 not_in_queue", q)
	}
	// A burst of joins by one user: the limit (1/s, burst 4) answers 429.
	limited := 0
	for range 10 {
		if q := s.queue(http.MethodPost, act, 7); q.status == http.StatusTooManyRequests {
			limited++
		} else if q.status != http.StatusOK {
			t.Errorf("join: %+v", q)
		}
	}
	if limited == 0 {
		t.Error("10 joins by one user at once: none limited")
	}
	plain := s.createActivity(1)
	if q := s.queue(http.MethodPost, plain, 8); q.status != http.StatusConflict || q.code != "no_waiting_room" {
		t.Errorf("join without a room: %+v, want 409 no_waiting_room", q)
	}
	now := time.Now().UTC()
	r := s.do("POST", "/admin/v1/activities", map[string]any{
		"name": "later", "total_stock": 1, "starts_at": now.Add(time.Hour).Format(time.RFC3339),
		"ends_at": now.Add(2 * time.Hour).Format(time.RFC3339), "waiting_room": map[string]any{},
	}, admin())
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	later := int64(r.body["id"].(float64))
	if q := s.queue(http.MethodPost, later, 8); q.status != http.StatusConflict || q.code != "not_open" {
		t.Errorf("join 60 minutes before the start (opens 30 before): %+v, want 409 not_open", q)
	}
	room := fmt.Sprintf("/admin/v1/activities/%d/waiting-room", plain)
	if r := s.do("PUT", room, map[string]any{}, admin()); r.status != http.StatusConflict || r.code() != "already_started" {
		t.Errorf("PUT a room after the start: %d %s, want 409 already_started", r.status, r.raw)
	}

	time.Sleep(time.Until(startsAt))
	if r := s.buy(act, 9, nil); r.status != http.StatusForbidden || r.code() != "not_admitted" {
		t.Errorf("buy without joining: %d %s, want 403 not_admitted", r.status, r.raw)
	}
	if r := s.do("DELETE", fmt.Sprintf("/admin/v1/activities/%d/waiting-room", act), nil, admin()); r.status != http.StatusOK || r.body["waiting_room"] != nil {
		t.Fatalf("DELETE the room: %d %s", r.status, r.raw)
	}
	if r := s.buy(act, 9, nil); r.status != http.StatusCreated {
		t.Errorf("buy after the room was turned off: %d %s, want 201", r.status, r.raw)
	}
	if q := s.queue(http.MethodPost, act, 10); q.status != http.StatusConflict || q.code != "no_waiting_room" {
		t.Errorf("join after the room was turned off: %+v, want 409 no_waiting_room", q)
	}
}
