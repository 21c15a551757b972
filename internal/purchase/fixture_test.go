package purchase_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// These are fast unit tests on the embedded stores (miniredis, SQLite).
// The safety claims are proven against real Redis and MariaDB in e2e/.

// clock is a settable clock for the service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	svc    wiring.Service
	rdb    *redis.Client
	clock  *clock
	orders *order.Store
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:", order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	return newFixtureOn(t, orders)
}

// newFixtureOn is newFixture on the given order store.
func newFixtureOn(t *testing.T, orders *order.Store) fixture {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	c := &clock{now: time.Now()}
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: c.Now}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return fixture{svc: svc, rdb: rdb, clock: c, orders: orders}
}

func (f fixture) activity(t *testing.T, total int64) int64 {
	t.Helper()
	now := f.clock.Now()
	a, err := f.svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai 53%", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// buy is user's order of one unit of activity.
func (f fixture) buy(ctx context.Context, activity, user int64) (seckill.Order, error) {
	return f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: activity, UserID: user})
}

func code(err error) string {
	var e *seckill.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
