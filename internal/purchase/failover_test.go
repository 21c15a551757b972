package purchase

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// A Redis failover that loses a batch's refence (the fence counter's INCR
// and the lock key's new value) and its deduct must not give the next
// batch of the same hold that batch's fence and token: both would use one
// receipt, and batch N's settle would act on batch N+1's units. Here batch
// N refences and deducts one unit; the failover rolls Redis back to just
// before N's refence (counter, lock value, receipt, remaining), as a
// replica promoted before those writes reached it would be; batch N+1
// refences under the same hold and deducts one unit; N's write fails and it
// settles at 0. N+1's unit must stay deducted for the order N+1 writes.
// Can fail: with refence.lua issuing the counter's next value whatever the
// holder had, N+1 gets N's fence, `deduct:F:<owner>:F` is one key for
// both, and N's settle gives N+1's unit back (Redis then holds a unit the
// database has sold).
func TestFailoverNeverGivesTwoBatchesOneReceipt(t *testing.T) {
	cfg := testenv.MySQLConfig(t, testenv.MySQLDSN(t))
	s, a := serviceOn(t, cfg, 10)
	ctx := context.Background()
	if err := s.stock.Load(ctx, a.ID, 10, 1); err != nil {
		t.Fatal(err)
	}
	q := &queue{activity: a}
	t.Cleanup(func() { s.sell.endTenure(q) })

	first, err := s.sell.grantFor(q) // obtains the hold
	if err != nil {
		t.Fatalf("first batch: no grant: %v", err)
	}
	n, err := s.sell.grantFor(q) // refences under it
	if err != nil || n.stock.Fence <= first.stock.Fence {
		t.Fatalf("batch N: fence %d after %d (%v)", n.stock.Fence, first.stock.Fence, err)
	}
	if _, taken, _, err := s.stock.DeductEach(ctx, a.ID, n.stock, []int64{1}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("batch N's deduct: %d, %v", taken, err)
	}

	// The failover: the promoted replica has Redis as it was before N's
	// refence.
	lockKey := s.stock.Keys().Lock(a.ID)
	fenceKey, err := lock.FenceKey(lockKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := redisOf(s).Set(ctx, fenceKey, first.stock.Fence, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := redisOf(s).SetArgs(ctx, lockKey, first.stock.Token, redis.SetArgs{KeepTTL: true}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := redisOf(s).Del(ctx, s.stock.Keys().Activity(a.ID, "deduct:"+strconv.FormatInt(n.stock.Fence, 10)+":"+n.stock.Token)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := redisOf(s).HIncrBy(ctx, s.stock.Keys().Stock(a.ID), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}

	next, err := s.sell.grantFor(q)
	if err != nil {
		t.Fatalf("batch N+1: no grant: %v", err)
	}
	if next.stock == n.stock {
		t.Errorf("batch N+1 has batch N's grant %+v after the failover: one receipt for both", n.stock)
	}
	if _, taken, _, err := s.stock.DeductEach(ctx, a.ID, next.stock, []int64{2}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("batch N+1's deduct: %d, %v", taken, err)
	}
	s.sell.giveBack(n.lease, a.ID, n.stock, 0, 1, "write_failed") // N's write failed: nothing of N's is sold
	if left, err := s.stock.Remaining(ctx, a.ID); err != nil || left != 9 {
		t.Errorf("remaining %d, %v after N's settle: want 9, batch N+1's unit still deducted for its order", left, err)
	}
}
