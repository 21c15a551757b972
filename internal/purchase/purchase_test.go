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
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/stock"
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
	svc   *purchase.Service
	rdb   *redis.Client
	clock *clock
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	c := &clock{now: time.Now()}
	svc, err := purchase.New(purchase.Config{LockTTL: time.Second, UserCheckTimeout: 200 * time.Millisecond, Now: c.Now},
		purchase.Deps{Redis: rdb, Locks: locks, Stock: stock.New(rdb, ""), Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{svc: svc, rdb: rdb, clock: c}
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

func code(err error) string {
	var e *seckill.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestNewRefusesAVerificationTimeoutNotShorterThanTheLease(t *testing.T) {
	for _, c := range []struct{ ttl, timeout time.Duration }{{time.Second, time.Second}, {time.Second, 2 * time.Second}, {time.Second, 0}, {0, time.Second}} {
		_, err := purchase.New(purchase.Config{LockTTL: c.ttl, UserCheckTimeout: c.timeout}, purchase.Deps{})
		if err == nil {
			t.Errorf("New accepted lock TTL %v with verification timeout %v", c.ttl, c.timeout)
		}
	}
}

func TestCreateActivityValidates(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	for name, a := range map[string]seckill.Activity{
		"empty name":     {Name: "", TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"long name":      {Name: string(make([]rune, 129)), TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"no stock":       {Name: "x", TotalStock: 0, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"too much stock": {Name: "x", TotalStock: seckill.MaxTotalStock + 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"ends at start":  {Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now},
		"ends before it": {Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now.Add(-time.Hour)},
	} {
		if _, err := f.svc.CreateActivity(context.Background(), a); code(err) != seckill.EInvalid {
			t.Errorf("%s: %v, want invalid_request", name, err)
		}
	}
}

func TestBuyThenAlreadyPurchasedThenSoldOut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 1)
	o, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 1})
	if err != nil || o.ActivityID != act || o.UserID != 1 || o.Status != seckill.OrderStatusCreated || o.ID == "" {
		t.Fatalf("Buy = %+v, %v", o, err)
	}
	_, err = f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 1})
	var e *seckill.Error
	if !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != o.ID {
		t.Errorf("second Buy: %v, want already_purchased with order %s", err, o.ID)
	}
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Errorf("Buy of the second unit: %v, want sold_out", err)
	}
	a, err := f.svc.Audit(ctx, act)
	if err != nil || !a.Consistent || a.Oversold || a.Orders != 1 {
		t.Errorf("Audit = %+v, %v", a, err)
	}
}

func TestWindow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 5)
	f.clock.Add(-2 * time.Minute)
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 1}); code(err) != seckill.ENotStarted {
		t.Errorf("before the window: %v", err)
	}
	f.clock.Add(2*time.Minute + time.Hour)
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 1}); code(err) != seckill.EEnded {
		t.Errorf("after the window: %v", err)
	}
}

// The in-process sold-out mark answers without Redis, but only for a second:
// a unit put back by another process is sold through this one soon after.
func TestSoldOutMarkIsRecheckedAfterASecond(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 2)
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 1}); err != nil {
		t.Fatal(err)
	}
	// Another process deducts the last unit, and this one sees the activity
	// sold out and marks it.
	if err := f.rdb.HSet(ctx, stock.Key("", act), "remaining", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Fatalf("with no unit left: %v, want sold_out", err)
	}
	// The other process could not write its order and puts the unit back.
	if err := f.rdb.HSet(ctx, stock.Key("", act), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Fatalf("within the mark's second: %v, want sold_out from the mark", err)
	}
	f.clock.Add(time.Second)
	if _, err := f.svc.Buy(ctx, purchase.BuyRequest{ActivityID: act, UserID: 2}); err != nil {
		t.Errorf("after the mark's second: %v, want the returned unit sold", err)
	}
}

// While one purchase of an activity is in flight in this process, another
// answers busy at once, without a Redis round trip.
func TestOnePurchasePerActivityAtATime(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer orders.Close()
	locks := lock.New(rdb, nil)
	defer locks.Close()
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	users := verifierFunc(func(ctx context.Context, _, _ int64) error {
		entered <- struct{}{}
		<-gate
		return nil
	})
	svc, err := purchase.New(purchase.Config{LockTTL: 5 * time.Second, UserCheckTimeout: time.Second},
		purchase.Deps{Redis: rdb, Locks: locks, Stock: stock.New(rdb, ""), Orders: orders, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "x", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := svc.Buy(context.Background(), purchase.BuyRequest{ActivityID: a.ID, UserID: 1})
		done <- err
	}()
	<-entered
	before := mr.CommandCount()
	if _, err := svc.Buy(context.Background(), purchase.BuyRequest{ActivityID: a.ID, UserID: 2}); code(err) != seckill.EBusy {
		t.Errorf("second purchase while the first holds the activity: %v, want busy", err)
	}
	if n := mr.CommandCount() - before; n != 0 {
		t.Errorf("the busy answer cost %d Redis commands, want 0", n)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Errorf("first purchase: %v", err)
	}
}

type verifierFunc func(ctx context.Context, userID, activityID int64) error

func (f verifierFunc) Verify(ctx context.Context, userID, activityID int64) error {
	return f(ctx, userID, activityID)
}
