package purchase

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	dto "github.com/prometheus/client_model/go"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// commitHold holds, once armed, the next COMMIT any connection through its
// proxy sends, and only that one. It sees every connection: it is set
// before the store opens any.
type commitHold struct {
	p     *faultproxy.Proxy
	armed atomic.Bool
}

func newCommitHold(p *faultproxy.Proxy) *commitHold {
	h := &commitHold{p: p}
	p.SetRequestMatch(func() func([]byte) bool {
		return func(b []byte) bool {
			// A COM_QUERY packet: 3 bytes of length, a sequence number, 0x03.
			isCommit := len(b) > 5 && b[4] == 0x03 && string(b[5:]) == "COMMIT"
			return isCommit && h.armed.CompareAndSwap(true, false)
		}
	})
	return h
}

// arm holds the next COMMIT for d.
func (h *commitHold) arm(d time.Duration) {
	h.p.SetRequestDelay(d)
	h.armed.Store(true)
}

// Batch N's COMMIT is held while batch N+1 of the same activity comes: N+1
// is verified and deducted meanwhile (the overlap), and both batches end
// with exact answers, no unit sold twice and none lost: every buyer told
// 201 has the order row, every buyer told otherwise has none, and orders
// plus Redis's stock make the total. Held within the lease, N's COMMIT
// lands and both batches sell; held past it, N's outcome is learned by the
// locking read and N+1, whose lease ran out waiting for N, sells nothing.
//
// Can fail: with the leader waiting for the last batch's write before the
// next grant (awaitTurn on written, not before), "N's COMMIT was delivered
// before N+1 deducted". The order of the two writes is kept here by the
// committer, which puts one activity in a group at most; writeBehind's wait
// for the batch before keeps it where the committer does not (a write that
// left a group for a busy row and is written alone).
func TestHeldCommitWithTheNextBatchInFlight(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold time.Duration
	}{
		{"held within the lease", 600 * time.Millisecond},
		{"held past the lease", 2500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const total, second = 100, 20
			s, h, a := overlapFixture(t, total)
			p := h.p
			h.arm(tc.hold)
			answers := make(chan boughtAnswer, 1+second)
			var wg sync.WaitGroup
			buy := func(from, to int64) {
				for u := from; u <= to; u++ {
					wg.Go(func() {
						o, err := s.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: u})
						answers <- boughtAnswer{u, o, err}
					})
				}
			}
			buy(1, 1) // batch N
			testenv.WaitFor(t, 20*time.Second, "batch N's COMMIT held", func() bool { return p.Held() == 1 })
			buy(2, 1+second)
			testenv.WaitFor(t, 20*time.Second, "a batch after N deducted while N's COMMIT is held", func() bool {
				left, err := s.stock.Remaining(context.Background(), a.ID)
				return err == nil && left <= total-1-overlapMin
			})
			if p.Holding() == 0 {
				t.Fatal("N's COMMIT was delivered before N+1 deducted: no overlap was shown")
			}
			wg.Wait()
			close(answers)
			checkExact(t, s, a, total, answers)
		})
	}
}

// A buyer's order is on its way (its COMMIT held past the lease) when they
// ask again on another instance. That instance gets the expired key, its
// holder look-up finds no row yet, and it deducts a unit for them; its claim
// waits for the held transaction's row lock, and the database's unique key
// then keeps the second order out: that unit goes back (the partial settle
// in sale.write). The buyer hears already_purchased with the order the first
// instance wrote, and the books balance. (One instance serves a repeat from
// its purchase in flight, inflights, and never deducts for it.)
//
// Can fail: with the partial settle taken away (`keep < taken` made false),
// "1 orders + 8 in Redis = 9, want 1 order and 10 in all".
func TestRepeatOnAnotherInstanceBehindAHeldCommitGivesItsUnitBack(t *testing.T) {
	const total, hold = 10, 3500 * time.Millisecond
	ctx := context.Background()
	first, h, a, direct := overlapFixtureDSN(t, total) // lease: 1 s
	// A lease that outlasts the held COMMIT, so its claim waits for the row.
	second := instanceOn(t, direct, first.stock.Keys(), 5*time.Second)
	h.arm(hold)
	firstAnswer := make(chan boughtAnswer, 1)
	go func() {
		o, err := first.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1})
		firstAnswer <- boughtAnswer{1, o, err}
	}()
	testenv.WaitFor(t, 20*time.Second, "the first purchase's COMMIT held", func() bool { return h.p.Held() == 1 })
	time.Sleep(1500 * time.Millisecond) // the first lease's key has expired; 2 s of the hold are left
	_, againErr := second.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1})
	got := <-firstAnswer
	rows, err := first.orders.Orders.OrdersByUsers(ctx, a.ID, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	if got.err == nil && rows[1].ID != got.order.ID {
		t.Errorf("first purchase told 201 with order %s; the database holds %q", got.order.ID, rows[1].ID)
	}
	t.Logf("first instance: %v (order %s); the other: %v", got.err, got.order.ID, againErr)
	if rows[1].ID == "" {
		t.Fatalf("the held COMMIT wrote no order (first purchase: %v): nothing shown", got.err)
	}
	var e *seckill.Error
	if !errors.As(againErr, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != rows[1].ID {
		t.Errorf("the purchase on the other instance: %v, want already_purchased with order %s", againErr, rows[1].ID)
	}
	n, err := first.orders.Orders.CountOrders(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	left, err := first.stock.Remaining(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || n+left != total {
		t.Errorf("%d orders + %d in Redis = %d, want 1 order and %d in all", n, left, n+left, total)
	}
	var back dto.Metric
	if err := second.m.returned.WithLabelValues("already_ordered").Write(&back); err != nil {
		t.Fatal(err)
	}
	if back.GetCounter().GetValue() != 1 {
		t.Errorf("the other instance gave %v units back for an order the unique key kept out, want 1 (it deducted one)", back.GetCounter().GetValue())
	}
}

type boughtAnswer struct {
	user  int64
	order seckill.Order
	err   error
}

// checkExact holds each answer to the database: 201 exactly for the buyers
// with an order row (one each), the others told 503 (nothing sold) or 429
// (a queue wait that ran out behind the held batch), and the books
// balanced.
func checkExact(t *testing.T, s *Service, a seckill.Activity, total int64, answers <-chan boughtAnswer) {
	t.Helper()
	ctx := context.Background()
	var users []int64
	got := map[int64]boughtAnswer{}
	for b := range answers {
		users = append(users, b.user)
		got[b.user] = b
	}
	rows, err := s.orders.Orders.OrdersByUsers(ctx, a.ID, users)
	if err != nil {
		t.Fatal(err)
	}
	fences := map[int64]int{}
	for _, u := range users {
		b, row := got[u], rows[u]
		switch {
		case b.err == nil && row.ID != b.order.ID:
			t.Errorf("user %d told 201 with order %s; the database holds %q", u, b.order.ID, row.ID)
		case b.err != nil && row.ID != "":
			t.Errorf("user %d told %v; the database holds its order %s", u, b.err, row.ID)
		case b.err != nil && !isCode(b.err, seckill.EUnavailable) && !isCode(b.err, seckill.EBusy):
			t.Errorf("user %d told %v, want an order, 503 or 429", u, b.err)
		case b.err == nil:
			fences[b.order.Fence]++
		}
	}
	left, err := s.stock.Remaining(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sold := int64(len(rows)); sold+left != total {
		t.Errorf("%d orders + %d in Redis = %d, want %d", sold, left, sold+left, total)
	}
	t.Logf("orders by fence %v; %d of %d buyers sold", fences, len(rows), len(users))
}

func isCode(err error, code string) bool {
	var e *seckill.Error
	return errors.As(err, &e) && e.Code == code
}

// overlapFixture is a service on the real Redis and MariaDB, the database
// behind a fault proxy, with an activity of total units loaded.
func overlapFixture(t *testing.T, total int64) (*Service, *commitHold, seckill.Activity) {
	t.Helper()
	s, h, a, _ := overlapFixtureDSN(t, total)
	return s, h, a
}

// overlapFixtureDSN is overlapFixture, and the database's DSN without the
// proxy.
func overlapFixtureDSN(t *testing.T, total int64) (*Service, *commitHold, seckill.Activity, *mysql.Config) {
	t.Helper()
	direct := testenv.MySQLConfig(t, testenv.MySQLDSN(t))
	cfg, p := testenv.DelayedMySQL(t, direct)
	h := newCommitHold(p)
	s, a := serviceOn(t, cfg, total)
	if err := s.stock.Load(context.Background(), a.ID, total, 1); err != nil {
		t.Fatal(err)
	}
	return s, h, a, direct
}
