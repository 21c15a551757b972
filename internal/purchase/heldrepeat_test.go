package purchase

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// One admission holds one unit while its buyer's first batch is still
// being written. A room of 10 units admits users 1 to 10. User 1 buys on
// instance A, whose COMMIT is held past its lease (3 s); 1.2 s in, user 1
// asks again on instance B (the client gave up waiting), and users 2 to 10
// queue there while B verifies user 1 (300 ms) and A's COMMIT is still
// held. None of them is told sold_out; user 1 holds one order.
// Can fail: B's holder look-up, a plain read, finds no row yet and B
// deducts a unit for user 1's repeat; the nine others' batch is granted
// while that write waits for A's row: nine units wanted of the eight left,
// and an admitted buyer is told sold_out. (Those nine may be told 429 busy
// with the fix: B's leader waits for A's COMMIT, and their queue wait may
// run out; their admissions stay open.)
func TestRepeatBehindAHeldCommitLeavesTheOtherAdmittedBuyersTheirUnits(t *testing.T) {
	const hold, users = 3 * time.Second, 10
	ctx := context.Background()
	direct := testenv.MySQLConfig(t, testenv.MySQLDSN(t))
	cfg, p := testenv.DelayedMySQL(t, direct)
	h := newCommitHold(p)
	prefix := testenv.Prefix(t)
	instA := roomInstanceOn(t, cfg, prefix, time.Second, nil)
	instB := roomInstanceOn(t, direct, prefix, time.Second, slowFirstUser{})
	a := openRoom(t, instA, users)
	for u := int64(1); u <= users; u++ {
		admitUser(t, instA, a.ID, u)
	}

	h.arm(hold)
	first := make(chan error, 1)
	go func() {
		_, err := instA.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1})
		first <- err
	}()
	testenv.WaitFor(t, 20*time.Second, "user 1's COMMIT held on A", func() bool { return h.p.Held() == 1 })
	time.Sleep(1200 * time.Millisecond) // A's key has expired; 1.8 s of the hold are left
	errs := make([]error, users+1)
	var wg sync.WaitGroup
	buy := func(u int64) {
		wg.Go(func() {
			_, errs[u] = instB.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: u})
		})
	}
	buy(1)
	time.Sleep(100 * time.Millisecond) // user 1's batch is being verified on B, or waits for A's row (the fix)
	if h.p.Holding() == 0 {
		t.Fatal("A's COMMIT was delivered before the others bought: nothing shown")
	}
	for u := int64(2); u <= users; u++ {
		buy(u)
	}
	wg.Wait()
	t.Logf("user 1 on A: %v; on B: %v", <-first, errs[1:])
	for u := int64(2); u <= users; u++ {
		if codeOf(errs[u]) == seckill.ESoldOut {
			t.Errorf("user %d, admitted, told sold_out on B behind A's held COMMIT", u)
		}
	}
	held, err := instA.orders.Orders.OrdersByUsers(ctx, a.ID, []int64{1})
	if err != nil || held[1].ID == "" {
		t.Errorf("user 1 holds no order (%v): the held COMMIT did not land, nothing shown", err)
	}
}

// slowFirstUser approves everyone, user 1 after 300 ms: the others queue
// meanwhile and are served in one batch after theirs.
type slowFirstUser struct{}

func (slowFirstUser) Verify(ctx context.Context, userID, _ int64) error {
	if userID == 1 {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
