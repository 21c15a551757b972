package purchase_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

func TestNewRefusesAVerificationTimeoutNotShorterThanTheLease(t *testing.T) {
	for _, c := range []struct{ ttl, timeout time.Duration }{{time.Second, time.Second}, {time.Second, 2 * time.Second}, {time.Second, 0}, {0, time.Second}} {
		_, err := purchase.New(purchase.Config{Lease: lock.Policy{TTL: c.ttl, CallTimeout: c.timeout}}, purchase.Deps{})
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

// TestStrictRequiresAPrice: with RequirePrice (SECKILL_STRICT, payments on)
// an activity without a price is refused, and so is removing a price; a
// priced one is created as usual.
// Can fail: without priceRequired, both are accepted.
func TestStrictRequiresAPrice(t *testing.T) {
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:", order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Books: books.Config{RequirePrice: true}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx, now := context.Background(), time.Now()
	a := seckill.Activity{Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)}
	if _, err := svc.CreateActivity(ctx, a); code(err) != seckill.EInvalid {
		t.Errorf("unpriced activity: %v, want invalid_request", err)
	}
	a.PriceMinor, a.Currency = 1999, "EUR"
	v, err := svc.CreateActivity(ctx, a)
	if err != nil {
		t.Fatalf("priced activity: %v", err)
	}
	if _, err := svc.SetPrice(ctx, v.ID, 0, ""); code(err) != seckill.EInvalid {
		t.Errorf("removing the price: %v, want invalid_request", err)
	}
}
