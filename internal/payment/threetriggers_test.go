package payment_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestThreeTriggersRace is seed 002's race: for every order, callbacks (some
// duplicated), result-page polls and the delay queue at pay_by run at once,
// on three instances sharing Redis and MariaDB. The provider says paid for
// some orders, pending for the rest, and some are paid after they expired.
// Every order ends in the state the provider's answer decides, no two
// verifications of one order overlap, each order's status changes once per
// transition, no unit goes back twice, and every expired unit sells again.
func TestThreeTriggersRace(t *testing.T) {
	orders := 1000
	if testenv.Short() {
		orders = 60
	}
	// Long enough that the in-time payers (who pay within a quarter of it)
	// have paid before the first pay_by, on a loaded machine under -race.
	const window = 3 * time.Second
	w := newWorld(t, window, int64(orders)+10)
	instances := []*instance{w.instance(instanceOptions{}), w.instance(instanceOptions{}), w.instance(instanceOptions{})}
	pick := func() *payment.Service { return instances[rand.IntN(len(instances))].svc }

	type plan int
	const (
		paysInTime plan = iota
		neverPays
		paysLate
	)
	all := make([]seckill.Order, orders)
	plans := make([]plan, orders)
	// Bought in batches of 50, as the purchase path writes them, so that
	// the first pay_by is still ahead when the triggers start.
	for first := 0; first < orders; first += 50 {
		users := make([]int64, 0, 50)
		for i := first; i < min(first+50, orders); i++ {
			users = append(users, int64(i+1))
		}
		copy(all[first:], w.buyBatch(users))
	}
	for i := range plans {
		plans[i] = plan(i % 3)
	}
	for _, in := range instances {
		in.svc.Start()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i, o := range all {
		wg.Go(func() {
			// Result-page polls from the buyer, before and after pay_by.
			for range 3 {
				time.Sleep(time.Duration(rand.IntN(int(window))))
				got := pick().Refresh(ctx, o)
				if got.ID != o.ID {
					t.Errorf("Refresh returned order %q for %q", got.ID, o.ID)
				}
			}
		})
		wg.Go(func() {
			switch plans[i] {
			case paysInTime:
				// Within the first quarter: three quarters of the window
				// are left for the callback on a loaded machine.
				time.Sleep(time.Duration(rand.IntN(int(window / 4))))
				w.stub.SetPayment(o.ID, payment.PaymentPaid)
				// The callback, sometimes twice at once, sometimes late.
				copies := 1 + rand.IntN(2)
				var cb sync.WaitGroup
				for range copies {
					cb.Go(func() { _, _ = pick().Callback(ctx, o.ID) })
				}
				cb.Wait()
			case neverPays:
				if rand.IntN(2) == 0 {
					w.stub.SetPayment(o.ID, payment.PaymentPending)
				}
			case paysLate:
				w.stub.SetPayment(o.ID, payment.PaymentPending)
				// Paid only once the order has expired: the callback finds it.
				for statusOf(t, w.orders, o.ID) == seckill.OrderStatusCreated && ctx.Err() == nil {
					time.Sleep(100 * time.Millisecond)
				}
				w.stub.SetPayment(o.ID, payment.PaymentPaid)
				// A provider sends its callback again until it is
				// acknowledged, and stops at the first acknowledgement
				// (200), whatever status it carries: one that meets a
				// verification already running (503) is not the last word.
				// Twice at once, too.
				var cb sync.WaitGroup
				for range 2 {
					cb.Go(func() {
						for ctx.Err() == nil {
							if _, err := pick().Callback(ctx, o.ID); err == nil {
								return
							}
							time.Sleep(50 * time.Millisecond)
						}
					})
				}
				cb.Wait()
			}
		})
	}
	wg.Wait()
	// The delay queue verifies every order still created after its pay_by.
	testenv.WaitFor(t, time.Minute, "every order settled", func() bool {
		counts, _ := w.books()
		return counts[seckill.OrderStatusCreated] == 0
	})
	// A callback of an in-time payer whose callbacks failed (busy) is
	// harmless: the queue found the payment at pay_by.

	want := map[plan]string{paysInTime: seckill.OrderStatusPaid, neverPays: seckill.OrderStatusExpired, paysLate: seckill.OrderStatusRefundRequired}
	for i, o := range all {
		if got := statusOf(t, w.orders, o.ID); got != want[plans[i]] {
			t.Errorf("order %d (plan %d): %s, want %s", i, plans[i], got, want[plans[i]])
		}
	}
	if n := w.stub.MaxInFlight(); n != 1 {
		t.Errorf("the provider saw %d queries of one order at once, want 1: verifications overlapped", n)
	}
	count := func(name string, labels map[string]string) (sum float64) {
		for _, in := range instances {
			sum += in.counter(t, name, labels)
		}
		return sum
	}
	planned := map[plan]float64{}
	for _, p := range plans {
		planned[p]++
	}
	// A late payer's order expires first, then becomes refund_required.
	expiring := planned[neverPays] + planned[paysLate]
	// The counters move just after the status they count: give the last
	// ones a few seconds on a loaded machine. They only grow, so a count
	// past its want (a status changed twice) stays wrong.
	settled := func(name string, labels map[string]string, want float64) float64 {
		got := count(name, labels)
		for deadline := time.Now().Add(10 * time.Second); got < want && time.Now().Before(deadline); got = count(name, labels) {
			time.Sleep(20 * time.Millisecond)
		}
		return got
	}
	// A change whose COMMIT reply was lost and whose locking read could not
	// learn it in time (a loaded machine: the lease ran out on the COMMIT,
	// the row was busy three times over) is counted under "unknown", never
	// under its status, and the trigger that finds the order changed later
	// counts "settled": such a change can be missing from its status's
	// count, never counted twice.
	for outcome, want := range map[string]float64{"paid": planned[paysInTime], "expired": expiring, "refund_required": planned[paysLate]} {
		got := settled("seckill_payment_verifications_total", map[string]string{"outcome": outcome}, want)
		unknown := count("seckill_payment_verifications_total", map[string]string{"outcome": "unknown"})
		switch {
		case got > want:
			t.Errorf("%s status changes: %v, want %v (one per order): a status changed twice", outcome, got, want)
		case got+unknown < want:
			t.Errorf("%s status changes: %v and %v of unknown outcome, want %v (one per order)", outcome, got, unknown, want)
		case got < want:
			t.Logf("%s status changes: %v, want %v: the rest among the %v of unknown outcome", outcome, got, want, unknown)
		}
	}
	if got := settled("seckill_payment_unit_returns_total", map[string]string{"result": "returned"}, expiring); got != expiring {
		t.Errorf("units returned: %v, want %v (one per expired order)", got, expiring)
	}
	w.checkBooks()
	counts, left := w.books()
	t.Logf("%d orders on 3 instances: %s; Redis %d; verifications by trigger: callback %v, result page %v, delay queue %v",
		orders, describe(counts), left,
		count("seckill_payment_verifications_total", map[string]string{"trigger": "callback"}),
		count("seckill_payment_verifications_total", map[string]string{"trigger": "result_page"}),
		count("seckill_payment_verifications_total", map[string]string{"trigger": "delay_queue"}))

	// Every unit given back sells again, to new buyers, and no more. The
	// instances stop first: their delay queues would expire these new,
	// unpaid orders one window later, and give their units back again.
	for _, in := range instances {
		_ = in.svc.Close()
	}
	for u := int64(0); u < left; u++ {
		w.buy(1_000_000 + u)
	}
	if _, _, _, err := w.stock.DeductEach(ctx, w.activity.ID, stock.Grant{Fence: w.fence.Add(1)}, []int64{2_000_000}, []int64{1}); err == nil {
		t.Error("a unit more than the returned ones could be deducted")
	}
	w.checkBooks()
}
