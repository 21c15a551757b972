package purchase_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// One instance's crowd never stops, so it keeps the activity's lock from one
// batch to the next. Buyers on a second instance still get the key within
// their queue wait: their Obtain marks it as waited for, and the hold lets
// it go after the batch in flight.
//
// Can fail: with the waiters' marker ignored in refence.lua, the second
// instance's buyers are told 429 once their queue wait is over.
func TestAnotherInstanceGetsTheKeyFromAHold(t *testing.T) {
	ctx := context.Background()
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	cfg := app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: 2 * time.Second, CallTimeout: 500 * time.Millisecond, Wait: time.Second}}
	crowded, _ := wiring.OnReal(t, testenv.Redis(t), dsn, cfg, usercheck.ApproveAll{}, nil)
	other, _ := wiring.OnReal(t, testenv.Redis(t), dsn, cfg, usercheck.ApproveAll{}, nil)
	now := time.Now()
	a, err := crowded.CreateActivity(ctx, seckill.Activity{Name: "held", TotalStock: 1_000_000, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var next atomic.Int64
	var crowd sync.WaitGroup
	for range 32 {
		crowd.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = crowded.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1_000 + next.Add(1)})
			}
		})
	}
	defer crowd.Wait()
	defer close(stop)
	time.Sleep(200 * time.Millisecond) // the crowd holds the key
	for u := int64(1); u <= 5; u++ {
		if _, err := other.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: u}); err != nil {
			t.Fatalf("buyer %d on the other instance: %v, want an order (the crowd's instance sold %d meanwhile)", u, err, next.Load())
		}
	}
}
