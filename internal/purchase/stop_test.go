package purchase_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

// Paused through this instance: buyers are told paused, a holder
// already_purchased; resumed, the sale goes on at once. The end answers
// ended, and a pause after it is refused ended.
func TestPauseResumeEnd(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 5)
	if _, err := f.buy(ctx, act, 1); err != nil {
		t.Fatal(err)
	}
	if v, err := f.svc.Pause(ctx, act); err != nil || !v.Paused {
		t.Fatalf("Pause = %+v, %v", v, err)
	}
	if _, err := f.buy(ctx, act, 2); code(err) != seckill.EPaused {
		t.Errorf("Buy while paused: %v, want paused", err)
	}
	if _, err := f.buy(ctx, act, 1); code(err) != seckill.EAlreadyPurchased {
		t.Errorf("a holder's Buy while paused: %v, want already_purchased", err)
	}
	if v, err := f.svc.Resume(ctx, act); err != nil || v.Paused {
		t.Fatalf("Resume = %+v, %v", v, err)
	}
	if _, err := f.buy(ctx, act, 2); err != nil {
		t.Errorf("Buy after resume: %v", err)
	}
	if v, err := f.svc.End(ctx, act); err != nil || v.Status != seckill.StatusEnded {
		t.Fatalf("End = %+v, %v", v, err)
	}
	if _, err := f.buy(ctx, act, 3); code(err) != seckill.EEnded {
		t.Errorf("Buy after the end: %v, want ended", err)
	}
	if _, err := f.svc.Pause(ctx, act); code(err) != seckill.EEnded {
		t.Errorf("Pause after the end: %v, want ended", err)
	}
	if a, err := f.svc.Audit(ctx, act); err != nil || !a.Consistent || a.Orders != 2 {
		t.Errorf("Audit = %+v, %v", a, err)
	}
}

// Paused and ended on another instance (only Redis's flags say so; this
// instance's activity is as before): the deduct refuses. The paused answer
// is remembered for a second only, then Redis is asked again.
func TestStoppedElsewhereTheDeductDecides(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 5)
	stockKey := keys.Space{}.Stock(act)
	f.rdb.HSet(ctx, stockKey, "paused", time.Now().UnixMilli())
	if _, err := f.buy(ctx, act, 1); code(err) != seckill.EPaused {
		t.Errorf("Buy paused elsewhere: %v, want paused", err)
	}
	f.rdb.HDel(ctx, stockKey, "paused") // resumed elsewhere
	if _, err := f.buy(ctx, act, 2); code(err) != seckill.EPaused {
		t.Errorf("Buy within the mark's second: %v, want paused (the mark)", err)
	}
	f.clock.Add(time.Second)
	if _, err := f.buy(ctx, act, 2); err != nil {
		t.Errorf("Buy a second after the resume elsewhere: %v", err)
	}
	f.rdb.HSet(ctx, stockKey, "ended", 1)
	if _, err := f.buy(ctx, act, 3); code(err) != seckill.EEnded {
		t.Errorf("Buy ended elsewhere: %v, want ended", err)
	}
	if a, err := f.svc.Audit(ctx, act); err != nil || !a.Consistent || a.Orders != 1 {
		t.Errorf("Audit = %+v, %v", a, err)
	}
}
