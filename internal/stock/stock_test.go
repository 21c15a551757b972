package stock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

const (
	units   = 100 // stock on sale in the race tests
	workers = 64  // concurrent buyers, each buying until sold out
)

// loadedStock is a Store on the test's Redis under a prefix of its own,
// with activity 1's stock loaded at fence 1; rdb and prefix are for the
// test's direct reads and writes.
func loadedStock(t *testing.T, total int64) (s *stock.Store, rdb *redis.Client, prefix string) {
	t.Helper()
	rdb, prefix = testenv.Redis(t), testenv.Prefix(t)
	s = stock.New(rdb, keys.NewSpace(prefix))
	if err := s.Load(context.Background(), 1, total, 1); err != nil {
		t.Fatal(err)
	}
	return s, rdb, prefix
}

// sellOut starts workers goroutines that each call take until it reports sold
// out (0 units taken), and returns how many units were sold in total. take
// reports an error other than sold out by failing the test.
func sellOut(t *testing.T, take func(ctx context.Context) (sold int64, err error)) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		sold  atomic.Int64
		start = make(chan struct{})
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			<-start
			for {
				n, err := take(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				sold.Add(n)
			}
		})
	}
	close(start)
	wg.Wait()
	return sold.Load()
}

// checkSale is the invariant both race tests judge by: exactly the stock was
// sold and the counter ends at zero, not below.
func checkSale(sold, left int64) error {
	if sold != units || left != 0 {
		return fmt.Errorf("%d units on sale: sold %d, %d left in Redis", units, sold, left)
	}
	return nil
}

func TestDeductConcurrentSellsExactlyTheStock(t *testing.T) {
	s, _, _ := loadedStock(t, units)
	ctx := context.Background()
	var negative, fence atomic.Int64
	sold := sellOut(t, func(ctx context.Context) (int64, error) {
		// Grants of one to three units, as a busy sale's batches are.
		f := fence.Add(1)
		taken, left, err := deduct(ctx, s, 1, stock.Grant{Fence: f}, 1+f%3)
		if errors.Is(err, stock.ErrSoldOut) {
			return 0, nil
		}
		if left < 0 {
			negative.Add(1)
		}
		return taken, err
	})
	left, err := s.Remaining(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSale(sold, left); err != nil {
		t.Error(err)
	}
	if n := negative.Load(); n > 0 {
		t.Errorf("Deduct reported a negative remaining %d times", n)
	}
	t.Logf("%d buyers, %d units: sold %d, %d left", workers, units, sold, left)
}

// TestNaiveReadThenWriteOversells runs the seed incident's stock check (HGET,
// then HINCRBY when positive) under the same race and judge as the test above:
// it must be caught overselling, which shows the race test can fail.
func TestNaiveReadThenWriteOversells(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	key := keys.NewSpace(prefix).Stock(1)
	ctx := context.Background()
	naive := func(ctx context.Context) (int64, error) {
		left, err := rdb.HGet(ctx, key, "remaining").Int64()
		if err != nil || left <= 0 {
			return 0, err
		}
		return 1, rdb.HIncrBy(ctx, key, "remaining", -1).Err()
	}
	// A race can be lost by chance; a few rounds make a miss vanishingly rare.
	for round := 1; round <= 5; round++ {
		if err := rdb.HSet(ctx, key, "remaining", units).Err(); err != nil {
			t.Fatal(err)
		}
		sold := sellOut(t, naive)
		left, err := rdb.HGet(ctx, key, "remaining").Int64()
		if err != nil {
			t.Fatal(err)
		}
		if err := checkSale(sold, left); err != nil {
			t.Logf("round %d: the naive check oversold, as expected: %v", round, err)
			return
		}
	}
	t.Fatal("the naive read-then-write never oversold: the race test cannot tell a broken deduct from a correct one")
}

func TestNotLoaded(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	s := stock.New(rdb, keys.NewSpace(prefix))
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
	assertNoKey(t, rdb, keys.NewSpace(prefix).Stock(1))
}

// TestSettleNeverResurrectsLostStock: after Redis lost the stock, a late
// Settle must not recreate it as "n units left", which a later preload would
// not expect and buyers would take.
func TestSettleNeverResurrectsLostStock(t *testing.T) {
	s, rdb, prefix := loadedStock(t, 5)
	ctx := context.Background()
	if _, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 7}, 3); err != nil {
		t.Fatal(err)
	}
	// The stock is lost, its receipt not (yet): the worst case for Settle.
	if err := rdb.Del(ctx, keys.NewSpace(prefix).Stock(1)).Err(); err != nil {
		t.Fatal(err)
	}

	if _, _, err := s.Settle(ctx, 1, stock.Grant{Fence: 7}, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Errorf("Settle after the key was lost: %v, want ErrNotLoaded", err)
	}
	assertNoKey(t, rdb, keys.NewSpace(prefix).Stock(1))
}

// TestSettleAfterReloadIsStale: units deducted before a reload (which counted
// them as unsold, their orders never having been written) must not be added
// again.
func TestSettleAfterReloadIsStale(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 5, 1); err != nil {
		t.Fatal(err)
	}
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
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 5, 1); err != nil {
		t.Fatal(err)
	}
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

func TestLoadReplacesAndRejectsNegative(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
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

func TestKeysShareTheActivitySlot(t *testing.T) {
	if got, want := keys.NewSpace("p:").Stock(42), "p:seckill:{act:42}:stock"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	if got, want := keys.NewSpace("p:").Lock(42), "p:seckill:{act:42}:lock"; got != want {
		t.Errorf("LockKey = %q, want %q", got, want)
	}
}

func assertNoKey(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	n, err := rdb.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("key %s exists; the failed call must not create it", key)
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
	direct, prefix := testenv.Redis(t), testenv.Prefix(t)
	s := stock.New(direct, keys.NewSpace(prefix))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 5, 1); err != nil {
		t.Fatal(err)
	}
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
	_, _, err := deduct(dctx, stock.New(slow, keys.NewSpace(prefix)), 1, stock.Grant{Fence: 7}, 2)
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

// TestLoadIfHeldOnlyUnderTheGrant: a load checked against the lock loads
// while the grant holds the lock, and changes nothing once the lock expired
// or passed to a newer holder (whose deducts it would otherwise overwrite).
func TestLoadIfHeldOnlyUnderTheGrant(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	s := stock.New(rdb, keys.NewSpace(prefix))
	locks := lock.New(rdb, nil)
	defer locks.Close()
	ctx := context.Background()
	key := keys.NewSpace(prefix).Lock(1)

	l, err := locks.Obtain(ctx, key, 200*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	newer, err := locks.Obtain(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	assertNoKey(t, rdb, keys.NewSpace(prefix).Stock(2))
}

func waitGone(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); rdb.Exists(context.Background(), key).Val() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after 30s", key)
		}
	}
}

// After a failover that lost the fence counter's last INCRs, a new grant can
// get the fence an old holder had. Receipts keyed by fence alone were then
// shared: the new grant's deduct read the old one's receipt as its own
// ("already deducted: 2 units"), took nothing, and a caller indexing its 5
// buyers with a count of another deduct sliced out of range. Keyed by the
// grant's token, each deduct has its own receipt.
func TestTwoGrantsWithOneFenceKeepTheirOwnReceipts(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 10, 1); err != nil {
		t.Fatal(err)
	}
	old, reused := stock.Grant{Fence: 5, Token: "old-holder"}, stock.Grant{Fence: 5, Token: "new-holder"}
	if taken, _, err := deduct(ctx, s, 1, old, 2); err != nil || taken != 2 {
		t.Fatalf("old grant's deduct: %d, %v; want 2", taken, err)
	}
	taken, left, err := deduct(ctx, s, 1, reused, 3)
	if err != nil || taken != 3 || left != 5 {
		t.Fatalf("new grant with the same fence: took %d, %d left, %v; want 3 and 5 left", taken, left, err)
	}
	// Each settles its own units back.
	if _, back, err := s.Settle(ctx, 1, old, 0); err != nil || back != 2 {
		t.Errorf("old grant's settle returned %d, %v; want its 2", back, err)
	}
	if _, back, err := s.Settle(ctx, 1, reused, 3); err != nil || back != 0 {
		t.Errorf("new grant's settle returned %d, %v; want 0 (it keeps its 3)", back, err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 7 {
		t.Errorf("remaining %d, want 7", left)
	}
}

// A count from Redis larger than what the deduct asked for is never passed
// on: a caller indexes its buyers with it.
func TestDeductRefusesACountLargerThanAsked(t *testing.T) {
	s, rdb, prefix := loadedStock(t, 10)
	ctx := context.Background()
	// A receipt holding more than this deduct will ask for.
	if err := rdb.Set(ctx, prefix+"seckill:{act:1}:deduct:9:tok", "1:8", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if taken, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 9, Token: "tok"}, 3); err == nil || taken != 0 {
		t.Fatalf("deduct = %d, %v; want 0 and an error (the reply does not add up for 3 buyers)", taken, err)
	}
}

// deduct takes n units for the grant as the purchase path does, one unit
// for each buyer (DeductEach): the buyers given, or else n made up for the
// grant, the same for a repeat of its deduct.
func deduct(ctx context.Context, s *stock.Store, activityID int64, g stock.Grant, n int64, buyers ...int64) (taken, remaining int64, err error) {
	if len(buyers) == 0 {
		for i := range n {
			buyers = append(buyers, g.Fence*1000+i+1)
		}
	}
	units := make([]int64, len(buyers))
	for i := range units {
		units[i] = 1
	}
	_, taken, remaining, err = s.DeductEach(ctx, activityID, g, buyers, units)
	return taken, remaining, err
}
