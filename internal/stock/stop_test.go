package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/stock"
)

// A paused sale's deduct takes nothing and leaves no receipt, whatever the
// caller believes; resumed, it sells; ended, it never sells again, and the
// end answers before the pause.
func TestDeductRefusesAStoppedSale(t *testing.T) {
	s, _, _ := loadedStock(t, 10)
	ctx := context.Background()
	if err := s.Pause(ctx, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 1}, 2, 7, 8); !errors.Is(err, stock.ErrPaused) {
		t.Fatalf("Deduct while paused: %v, want ErrPaused", err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 10 {
		t.Fatalf("%d left after a paused deduct, want 10", left)
	}
	if in, _ := s.Holders(ctx, 1, []int64{7, 8}); len(in) != 0 {
		t.Errorf("a paused deduct put buyers in the buyer set: %v", in)
	}
	if paused, err := s.Paused(ctx, 1); err != nil || !paused {
		t.Errorf("Paused = %v, %v; want true", paused, err)
	}
	if _, err := s.Resume(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if taken, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 1}, 1); err != nil || taken != 1 {
		t.Fatalf("Deduct after resume: %d, %v", taken, err)
	}
	_ = s.Pause(ctx, 1, time.Now())
	if err := s.End(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 2}, 1); !errors.Is(err, stock.ErrEnded) {
		t.Errorf("Deduct after the end: %v, want ErrEnded (before paused)", err)
	}
}

// A load writes the stop as the database has it: a Redis that lost the
// flag gets it back with the stock, and a load of an unpaused sale clears
// a stale one.
func TestLoadRestoresTheStop(t *testing.T) {
	s, rdb, ks := emptyStock(t)
	ctx := context.Background()
	l := obtain(t, rdb, ks.Lock(1), time.Minute)
	if err := s.LoadIfHeld(ctx, 1, 5, l.Fence(), l.Value(), stock.Halt{PausedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: l.Fence()}, 1); !errors.Is(err, stock.ErrPaused) {
		t.Errorf("Deduct after a load of a paused sale: %v, want ErrPaused", err)
	}
	if err := s.LoadIfHeld(ctx, 1, 5, l.Fence(), l.Value(), stock.Halt{Ended: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: l.Fence()}, 1); !errors.Is(err, stock.ErrEnded) {
		t.Errorf("Deduct after a load of an ended sale: %v, want ErrEnded", err)
	}
	if err := s.LoadIfHeld(ctx, 1, 5, l.Fence(), l.Value(), stock.Halt{}); err != nil {
		t.Fatal(err)
	}
	if taken, _, err := deduct(ctx, s, 1, stock.Grant{Fence: l.Fence()}, 1); err != nil || taken != 1 {
		t.Errorf("Deduct after a load of a running sale: %d, %v", taken, err)
	}
}

// Resume moves the admissions open when the pause began later by its
// length, once: a second resume moves nothing. An admission that had
// lapsed before the pause stays lapsed.
func TestResumeMovesOpenAdmissionsOnce(t *testing.T) {
	s, rdb, ks := loadedStock(t, 10)
	ctx := context.Background()
	admitted := ks.WaitingAdmitted(1)
	now := time.Now()
	open, lapsed := float64(now.Add(time.Minute).UnixMilli()), float64(now.Add(-time.Minute).UnixMilli())
	if err := rdb.ZAdd(ctx, admitted, redis.Z{Score: open, Member: "1"}, redis.Z{Score: lapsed, Member: "2"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(ctx, 1, now.Add(-2*time.Second)); err != nil {
		t.Fatal(err)
	}
	paused, err := s.Resume(ctx, 1)
	if err != nil || paused < 2*time.Second || paused > time.Minute {
		t.Fatalf("Resume = %v, %v; want about 2 s", paused, err)
	}
	if got := rdb.ZScore(ctx, admitted, "1").Val(); got != open+float64(paused.Milliseconds()) {
		t.Errorf("open admission until %v, want %v", got, open+float64(paused.Milliseconds()))
	}
	if got := rdb.ZScore(ctx, admitted, "2").Val(); got != lapsed {
		t.Errorf("lapsed admission moved to %v", got)
	}
	if again, err := s.Resume(ctx, 1); err != nil || again != 0 {
		t.Errorf("a second Resume = %v, %v; want 0", again, err)
	}
	if got := rdb.ZScore(ctx, admitted, "1").Val(); got != open+float64(paused.Milliseconds()) {
		t.Errorf("a second resume moved the admission to %v", got)
	}
}
