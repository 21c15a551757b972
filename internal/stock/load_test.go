package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/stock"
)

func TestNotLoaded(t *testing.T) {
	s, rdb, ks := emptyStock(t)
	ctx := context.Background()

	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 1}, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Errorf("Deduct: %v, want ErrNotLoaded", err)
	}
	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 1}, 0); !errors.Is(err, stock.ErrNoDeduct) {
		t.Errorf("Settle: %v, want ErrNoDeduct", err)
	}
	if _, err := s.Remaining(ctx, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Errorf("Remaining: %v, want ErrNotLoaded", err)
	}
	assertNoKey(t, rdb, ks.Stock(1))
}

func TestLoadReplacesAndRejectsNegative(t *testing.T) {
	s, _, _ := emptyStock(t)
	ctx := context.Background()
	for _, n := range []int64{7, 3} {
		if err := s.Load(ctx, 1, n, 1); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Remaining(ctx, 1); err != nil || got != n {
			t.Errorf("after Load(%d): Remaining = (%d, %v)", n, got, err)
		}
	}
	if err := s.Load(ctx, 1, -1, 1); err == nil {
		t.Error("Load accepted a negative stock")
	}
	if got, _ := s.Remaining(ctx, 1); got != 3 {
		t.Errorf("a rejected Load changed the stock to %d", got)
	}
}

// TestLoadIfHeldOnlyUnderTheGrant: a load checked against the lock loads
// while the grant holds the lock, and changes nothing once the lock expired
// or passed to a newer holder (whose deducts it would otherwise overwrite).
func TestLoadIfHeldOnlyUnderTheGrant(t *testing.T) {
	s, rdb, ks := emptyStock(t)
	ctx := context.Background()
	key := ks.Lock(1)

	l := obtain(t, rdb, key, 200*time.Millisecond)
	if err := s.LoadIfHeld(ctx, 1, 10, l.Fence(), l.Value(), stock.Halt{}); err != nil {
		t.Fatalf("LoadIfHeld under the grant: %v", err)
	}
	if left, err := s.Remaining(ctx, 1); err != nil || left != 10 {
		t.Fatalf("Remaining = %d, %v; want 10", left, err)
	}
	if err := s.LoadIfHeld(ctx, 1, -1, l.Fence(), l.Value(), stock.Halt{}); err == nil {
		t.Error("LoadIfHeld accepted a negative stock")
	}

	// The lease ends; a newer holder deducts.
	waitGone(t, rdb, key)
	newer := obtain(t, rdb, key, time.Minute) // another instance
	defer newer.Release(ctx)
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: newer.Fence()}, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadIfHeld(ctx, 1, 10, l.Fence(), l.Value(), stock.Halt{}); !errors.Is(err, stock.ErrLockLost) {
		t.Errorf("LoadIfHeld after the lease passed on: %v, want ErrLockLost", err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 9 {
		t.Errorf("Remaining = %d, want 9: the stale load overwrote the newer holder's deduct", left)
	}
	if err := s.LoadIfHeld(ctx, 2, 10, l.Fence(), l.Value(), stock.Halt{}); !errors.Is(err, stock.ErrLockLost) {
		t.Errorf("LoadIfHeld with no lock at all: %v, want ErrLockLost", err)
	}
	assertNoKey(t, rdb, ks.Stock(2))
}

func waitGone(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); rdb.Exists(context.Background(), key).Val() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after 30s", key)
		}
	}
}
