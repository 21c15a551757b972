package purchase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

func TestBuyThenAlreadyPurchasedThenSoldOut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 1)
	o, err := f.buy(ctx, act, 1)
	if err != nil || o.ActivityID != act || o.UserID != 1 || o.Status != seckill.OrderStatusCreated || o.ID == "" {
		t.Fatalf("Buy = %+v, %v", o, err)
	}
	_, err = f.buy(ctx, act, 1)
	var e *seckill.Error
	if !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != o.ID {
		t.Errorf("second Buy: %v, want already_purchased with order %s", err, o.ID)
	}
	if _, err := f.buy(ctx, act, 2); code(err) != seckill.ESoldOut {
		t.Errorf("Buy of the second unit: %v, want sold_out", err)
	}
	a, err := f.svc.Audit(ctx, act)
	if err != nil || !a.Consistent || a.Oversold || a.Orders != 1 {
		t.Errorf("seckill.Audit = %+v, %v", a, err)
	}
}

func TestWindow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 5)
	f.clock.Add(-2 * time.Minute)
	if _, err := f.buy(ctx, act, 1); code(err) != seckill.ENotStarted {
		t.Errorf("before the window: %v", err)
	}
	f.clock.Add(2*time.Minute + time.Hour)
	if _, err := f.buy(ctx, act, 1); code(err) != seckill.EEnded {
		t.Errorf("after the window: %v", err)
	}
}

// The in-process sold-out mark answers without Redis, but only for a second:
// a unit put back by another process is sold through this one soon after.
func TestSoldOutMarkIsRecheckedAfterASecond(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 2)
	if _, err := f.buy(ctx, act, 1); err != nil {
		t.Fatal(err)
	}
	// Another process deducts the last unit, and this one sees the activity
	// sold out and marks it.
	if err := f.rdb.HSet(ctx, keys.Space{}.Stock(act), "remaining", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.buy(ctx, act, 2); code(err) != seckill.ESoldOut {
		t.Fatalf("with no unit left: %v, want sold_out", err)
	}
	// The other process could not write its order and puts the unit back.
	if err := f.rdb.HSet(ctx, keys.Space{}.Stock(act), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.buy(ctx, act, 2); code(err) != seckill.ESoldOut {
		t.Fatalf("within the mark's second: %v, want sold_out from the mark", err)
	}
	f.clock.Add(time.Second)
	if _, err := f.buy(ctx, act, 2); err != nil {
		t.Errorf("after the mark's second: %v, want the returned unit sold", err)
	}
}
