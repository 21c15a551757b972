package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestSettleNeverResurrectsLostStock: after Redis lost the stock, a late
// Settle must not recreate it as "n units left", which a later preload would
// not expect and buyers would take.
func TestSettleNeverResurrectsLostStock(t *testing.T) {
	s, rdb, ks := loadedStock(t, 5)
	ctx := context.Background()
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 7}, 3); err != nil {
		t.Fatal(err)
	}
	// The stock is lost, its receipt not (yet): the worst case for Settle.
	if err := rdb.Del(ctx, ks.Stock(1)).Err(); err != nil {
		t.Fatal(err)
	}

	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Errorf("Settle after the key was lost: %v, want ErrNotLoaded", err)
	}
	assertNoKey(t, rdb, ks.Stock(1))
}

// TestSettleAfterReloadIsStale: units deducted before a reload (which counted
// them as unsold, their orders never having been written) must not be added
// again.
func TestSettleAfterReloadIsStale(t *testing.T) {
	s, _, _ := loadedStock(t, 5)
	ctx := context.Background()
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 7}, 2); err != nil {
		t.Fatalf("Deduct: %v", err)
	}
	if err := s.Load(ctx, 1, 5, 2); err != nil { // total 5, no orders: all 5 unsold
		t.Fatal(err)
	}
	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 0); !errors.Is(err, stock.ErrStale) {
		t.Errorf("Settle of units from before the reload: %v, want ErrStale", err)
	}
	if left, err := s.Remaining(ctx, 1); err != nil || left != 5 {
		t.Errorf("Remaining = %d, %v; want 5, as loaded", left, err)
	}
}

// TestBatchDeductAndSettle walks one activity through grants that take a
// batch each, fewer than they want at the end, and settle what their orders
// did not keep.
func TestBatchDeductAndSettle(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 5, 3); err != nil {
		t.Fatal(err)
	}
	type got struct{ a, b int64 }
	take := func(fence, n int64) func() (got, error) {
		return func() (got, error) {
			a, b, err := deduct(ctx, s, 1, stock.Grant{Fence: fence}, n)
			return got{a, b}, err
		}
	}
	settle := func(fence, keep int64) func() (got, error) {
		return func() (got, error) {
			a, b, err := s.Settle(ctx, 1, stock.Grant{Fence: fence}, keep)
			return got{a, b}, err
		}
	}
	steps := []struct {
		name string
		op   func() (got, error)
		want got
		err  error
	}{
		{"grant 10 takes 3 of 5", take(10, 3), got{3, 2}, nil},
		{"grant 10 resent takes nothing more", take(10, 3), got{3, 2}, nil},
		{"grant 11 wants 4, takes the 2 left", take(11, 4), got{2, 0}, nil},
		{"grant 12 finds none", take(12, 1), got{0, 0}, stock.ErrSoldOut},
		{"grant 12 settles: it took nothing", settle(12, 0), got{}, stock.ErrNoDeduct},
		{"grant 10 keeps 1 of 3 (2 orders not written)", settle(10, 1), got{2, 2}, nil},
		{"grant 10 settles again: nothing more", settle(10, 1), got{2, 0}, nil},
		{"grant 10 cannot raise what it keeps", settle(10, 3), got{2, 0}, nil},
		{"grant 11 keeps none", settle(11, 0), got{4, 2}, nil},
		{"grant 13 takes the 4 returned", take(13, 9), got{4, 0}, nil},
	}
	for _, st := range steps {
		g, err := st.op()
		if !errors.Is(err, st.err) || (err == nil && g != st.want) {
			t.Errorf("%s: (%d, %d, %v), want (%d, %d, %v)", st.name, g.a, g.b, err, st.want.a, st.want.b, st.err)
		}
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 14}, 0); err == nil {
		t.Error("a deduct of 0 units accepted")
	}
	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 13}, -1); err == nil {
		t.Error("Settle keeping -1 units accepted")
	}
}

// TestLateDeductAfterSettleTakesNothing: a deduct that timed out on the
// client is settled at 0, finds no receipt, and leaves a tombstone; the
// deduct then lands (a TCP retransmit, or a client resending it) and must
// take nothing, or its units would be lost to a grant nobody settles.
func TestLateDeductAfterSettleTakesNothing(t *testing.T) {
	s, _, _ := loadedStock(t, 5)
	ctx := context.Background()
	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 0); !errors.Is(err, stock.ErrNoDeduct) {
		t.Fatalf("Settle before the deduct landed: %v, want ErrNoDeduct", err)
	}
	if taken, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 7}, 3); !errors.Is(err, stock.ErrReturned) || taken != 0 {
		t.Errorf("late Deduct: (%d, %v), want (0, ErrReturned): it must take nothing", taken, err)
	}
	if left, err := s.Remaining(ctx, 1); err != nil || left != 5 {
		t.Errorf("Remaining = %d, %v; want 5", left, err)
	}
}

// TestSettleAfterLostReply: a deduct whose reply never arrived may have
// landed or not. Settling at 0 is safe either way: it puts the units back
// when the deduct landed, changes nothing when it did not, and never twice.
func TestSettleAfterLostReply(t *testing.T) {
	s, _, _ := loadedStock(t, 5)
	ctx := context.Background()
	// Fence 1's deduct landed, and was resent by a retrying client (its
	// replies are ignored); fence 2's never ran.
	_, _, _ = deduct(ctx, s, 1, stock.Grant{Fence: 1}, 2)
	_, _, _ = deduct(ctx, s, 1, stock.Grant{Fence: 1}, 2)
	for range 3 {
		_, _, _ = s.Settle(ctx, 1, stock.Grant{Fence: 1}, 0)
		_, _, _ = s.Settle(ctx, 1, stock.Grant{Fence: 2}, 0)
	}
	if left, err := s.Remaining(ctx, 1); err != nil || left != 5 {
		t.Errorf("Remaining = %d, %v; want 5: each landed deduct returned once, nothing else", left, err)
	}
}

// TestDeductLandingAfterItsSettleTakesNothing: a deduct times out on the
// client but reaches Redis later (a TCP retransmit, a resend), after the
// caller's Settle found no receipt. The Settle's tombstone makes the late
// deduct take nothing; without it the units would be taken under a fresh
// receipt that nobody settles.
func TestDeductLandingAfterItsSettleTakesNothing(t *testing.T) {
	s, _, ks := loadedStock(t, 5)
	ctx := context.Background()
	// Load deduct.lua into the script cache, so the late EVALSHA runs
	// rather than failing with NOSCRIPT.
	if err := s.Load(ctx, 2, 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deduct(ctx, s, 2, stock.Grant{Fence: 1}, 1); err != nil {
		t.Fatal(err)
	}

	slow, proxy := testenv.DelayedRedis(t, 0)
	const late = 500 * time.Millisecond
	proxy.SetRequestDelay(late)
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, _, err := deduct(dctx, stock.New(slow, ks), 1, stock.Grant{Fence: 7}, 2)
	cancel()
	if err == nil {
		t.Fatal("a deduct held back past its deadline succeeded")
	}
	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 0); !errors.Is(err, stock.ErrNoDeduct) {
		t.Fatalf("Settle before the deduct landed: %v, want ErrNoDeduct", err)
	}
	_ = slow.Close() // the client is gone; the proxy still delivers what it sent
	waitConnsGone(t, proxy)

	if left, err := s.Remaining(ctx, 1); err != nil || left != 5 {
		t.Errorf("Remaining = %d, %v; want 5: the deduct that landed after its settle took units", left, err)
	}
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 7}, 2); !errors.Is(err, stock.ErrReturned) {
		t.Errorf("Deduct after its Settle: %v, want ErrReturned", err)
	}
	if _, back, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 0); err != nil || back != 0 {
		t.Errorf("second Settle: %d back, %v; want nothing", back, err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 5 {
		t.Errorf("Remaining = %d after the repeats, want 5", left)
	}
}

// waitConnsGone waits until every proxied connection has ended: each command
// its client sent has been delivered and the server has closed its end.
func waitConnsGone(t *testing.T, p *faultproxy.Proxy) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); p.Conns() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d proxied connections still open after 30s", p.Conns())
		}
	}
}
