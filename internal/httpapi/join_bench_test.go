//go:build unix

package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	rediskeys "github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// BenchmarkJoin is a waiting-room join as the storm at a room's opening
// sends it (loadtest/bench.sh --join): every user distinct, 64 at once, in
// a room open before its start (pre-queue places), on the real Redis, with
// the service's middleware and answer. Compare with BenchmarkHealthz (the
// target: a join at most 1.5 times a /healthz):
//
//	go test -run '^$' -bench 'Join|Healthz' -benchtime 20000x ./internal/httpapi/
func BenchmarkJoin(b *testing.B) {
	ctx := context.Background()
	rdb, prefix := testenv.Redis(b), testenv.Prefix(b)
	now := time.Now()
	a := seckill.Activity{ID: 1, Name: "bench", TotalStock: 1000, StartsAt: now.Add(30 * time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Minute), Seed: "00112233445566778899aabbccddeeff"}}
	rooms, err := waitingroom.New(waitingroom.Config{}, waitingroom.Deps{
		Store:    waitingroom.NewStore(rdb, rediskeys.NewSpace(prefix), 0, 0),
		Activity: func(context.Context, int64) (seckill.Activity, error) { return a, nil },
		// The service's holder asks nothing of a user outside the buyer set.
		Holder: func(context.Context, int64, int64, bool) (seckill.Order, bool) { return seckill.Order{}, false },
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := rooms.Open(ctx, a); err != nil {
		b.Fatal(err)
	}
	h := NewServer(Config{}, Deps{Service: newFake(), Queue: rooms, Logger: errorLogger()})
	serveParallel(b, h, http.StatusOK, func(n int64) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/activities/1/queue", nil)
		r.Header.Set("X-User-ID", strconv.FormatInt(n, 10))
		return r
	})
}
