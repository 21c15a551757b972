package httpapi

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// IPv6 clients are counted by their /64: a host given a /64 cannot spread
// its guesses of the admin token over 2^64 addresses.
// Can fail: keyed by the whole address, the two addresses of one /64 are
// two keys.
func TestAddressKeyGroupsIPv6By64(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
	} {
		if addressKey(c.a) != addressKey(c.b) {
			t.Errorf("%s and %s: keys %q and %q, want one", c.a, c.b, addressKey(c.a), addressKey(c.b))
		}
	}
	for _, c := range []struct{ a, b string }{
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"10.0.0.1", "10.0.0.2"},
	} {
		if addressKey(c.a) == addressKey(c.b) {
			t.Errorf("%s and %s: one key %q, want two", c.a, c.b, addressKey(c.a))
		}
	}
}

// joinQueue is a Queue that gives everyone a waiting place.
type joinQueue struct{}

func (joinQueue) Join(_ context.Context, activityID, _ int64) (seckill.QueueStatus, error) {
	return seckill.QueueStatus{ActivityID: activityID, State: seckill.QueueWaiting, Position: 1, Refresh: time.Second}, nil
}

func (joinQueue) Mine(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error) {
	return joinQueue{}.Join(ctx, activityID, userID)
}

// Joins from one client address are limited beside each user's: forged
// user ids from one host run out of the address's bucket, another address
// still joins.
// Can fail: without the address bucket every forged id joins.
func TestJoinsArePerAddressLimited(t *testing.T) {
	cfg := Config{JoinAddressRate: 0.01, JoinAddressBurst: 3, Now: func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) }}
	h := NewServer(cfg, withParts(Deps{Service: newFake(), Queue: joinQueue{}}))
	join := func(user, addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/api/v1/activities/1/queue", nil)
		req.Header.Set("X-User-ID", user)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for u := 1; u <= 3; u++ {
		if rec := join(strconv.Itoa(u), "[2001:db8::1]:1234"); rec.Code != 200 {
			t.Fatalf("join %d within the burst: %d %s", u, rec.Code, rec.Body)
		}
	}
	rec := join("4", "[2001:db8::2]:1234") // the same /64
	checkError(t, rec, 429, seckill.EBusy)
	if rec.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if rec := join("5", "192.0.2.7:1234"); rec.Code != 200 {
		t.Errorf("another address: %d, want 200", rec.Code)
	}
}
