package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// TestLostRoomFailsClosedUntilTheSweep: on a real process, a waiting room
// whose keys Redis lost (the stock still there, as after a partial loss or
// a flush followed by a stock load) answers purchases, joins and polls 503,
// never 201 without an admission; the books sweep writes the room back from
// the database, and a buyer without an admission is then not_admitted.
// Can fail: without the sweep's restore the room stays lost (503 for ever);
// with a lost room read as "no room", the purchase is sold (201).
func TestLostRoomFailsClosedUntilTheSweep(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	p := startProcess(t, s.processEnv(map[string]string{"SECKILL_BOOKS_SWEEP": "500ms"}))
	s.url = p.url
	act, startsAt := s.createRoom(5, time.Second)
	time.Sleep(time.Until(startsAt))
	if r := s.buy(act, 1, nil); r.status != http.StatusForbidden || r.code() != "not_admitted" {
		t.Fatalf("no admission, room in Redis: %d %s, want 403 not_admitted", r.status, r.raw)
	}
	ctx := context.Background()
	if err := s.rdb.Del(ctx, keys.NewSpace(s.prefix).WaitingRoom(act)).Err(); err != nil {
		t.Fatal(err)
	}
	if r := s.buy(act, 1, nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("room lost from Redis: %d %s, want 503 (the room fails closed)", r.status, r.raw)
	}
	if q := s.queue(http.MethodPost, act, 2); q.status != http.StatusServiceUnavailable && q.status != http.StatusOK {
		t.Errorf("join while the room is lost: %+v, want 503 (or a place once restored)", q)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.buy(act, 1, nil)
		if r.status == http.StatusForbidden && r.code() == "not_admitted" {
			break
		}
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("while the room is lost or restored: %d %s, want 503 then 403 not_admitted", r.status, r.raw)
		}
		if time.Now().After(deadline) {
			t.Fatal("the books sweep (every 500 ms) did not restore the room within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n, err := s.rdb.Exists(ctx, keys.NewSpace(s.prefix).WaitingRoom(act)).Result(); err != nil || n != 1 {
		t.Errorf("room hash after the restore: %d, %v", n, err)
	}
}
