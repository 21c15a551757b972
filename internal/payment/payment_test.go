package payment_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
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

// TestTwoInstancesExpireTheSameOrders: both instances' delay queues and
// callbacks go for the same due orders; each gives exactly one unit back.
func TestTwoInstancesExpireTheSameOrders(t *testing.T) {
	const n = 20
	w := newWorld(t, time.Second, n)
	var returned atomic.Int64
	onReturned := func(activityID int64) {
		if activityID == w.activity.ID {
			returned.Add(1)
		}
	}
	a, b := w.instance(instanceOptions{onReturned: onReturned}), w.instance(instanceOptions{onReturned: onReturned})
	var ids []string
	for u := int64(1); u <= n; u++ {
		ids = append(ids, w.buy(u).ID)
	}
	time.Sleep(1100 * time.Millisecond) // all due
	a.svc.Start()
	b.svc.Start()
	var wg sync.WaitGroup
	for _, id := range ids {
		for _, in := range []*instance{a, b} {
			wg.Go(func() { _, _ = in.svc.Callback(context.Background(), id) })
		}
	}
	wg.Wait()
	testenv.WaitFor(t, 30*time.Second, "all orders expired", func() bool {
		counts, _ := w.books()
		return counts[seckill.OrderStatusExpired] == n
	})
	counts, left := w.books()
	if left != n {
		t.Errorf("Redis remaining %d after %d expiries from 0, want %d: %s", left, n, n, describe(counts))
	}
	if got := returned.Load(); got != n {
		t.Errorf("the purchase path was told of %d returned units, want %d (to clear its sold-out mark)", got, n)
	}
	w.checkBooks()
	// A buyer whose order expired keeps it as their one order.
	second, err := w.orders.Orders.CreateOrders(context.Background(), w.activity.ID, w.fence.Add(1), []seckill.Order{{UserID: 1}})
	if err != nil || len(second.KeptOut) != 1 {
		t.Errorf("second order of a buyer whose order expired: %+v, %v; want it kept out (409 already_purchased)", second, err)
	}
}

// TestResultPageVerifiesAtMostOnceASecond: a buyer refreshing the result
// page of a pending order, through three instances, queries the provider at
// most once a second.
func TestResultPageVerifiesAtMostOnceASecond(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	ins := []*instance{w.instance(instanceOptions{}), w.instance(instanceOptions{}), w.instance(instanceOptions{})}
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPending)
	for i := range 12 {
		if got := ins[i%3].svc.Refresh(context.Background(), o); got.Status != seckill.OrderStatusCreated {
			t.Fatalf("Refresh of a pending order before pay_by: %s, want created", got.Status)
		}
	}
	if n := w.stub.Requests(o.ID); n != 1 {
		t.Errorf("12 page views within a second queried the provider %d times, want 1", n)
	}
	time.Sleep(1100 * time.Millisecond)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	if got := ins[0].svc.Refresh(context.Background(), o); got.Status != seckill.OrderStatusPaid || got.PaidAt.IsZero() {
		t.Errorf("Refresh a second later, after payment: %+v, want paid with paid_at", got)
	}
}

// TestProviderSlowerThanTheLease: the provider answers after the per-order
// lease would have ended. The query is cut at its deadline, the order stays
// created, the lock is released and its renewal stopped: nothing of the
// verification outlives it.
func TestProviderSlowerThanTheLease(t *testing.T) {
	w := newWorld(t, time.Hour, 5)
	const ttl = 400 * time.Millisecond
	in := w.instance(instanceOptions{lockTTL: ttl})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	if err := w.stub.SetConfig(payment.StubConfig{Latency: 3 * ttl}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := in.svc.Callback(context.Background(), o.ID)
	took := time.Since(began)
	var se *seckill.Error
	if !errors.As(err, &se) || se.Code != seckill.EUnavailable || !errors.Is(err, payment.ErrUnknown) {
		t.Fatalf("Callback with a provider slower than the lease: %v, want unavailable wrapping ErrUnknown", err)
	}
	if took > 3*ttl {
		t.Errorf("Callback took %v, want it cut within the lease (%v)", took, ttl)
	}
	if s := statusOf(t, w.orders, o.ID); s != seckill.OrderStatusCreated {
		t.Errorf("order %s after an unknown answer, want created", s)
	}
	if renewals := goroutinesIn("(*Lock).renew"); renewals != 0 {
		t.Errorf("%d lock renewals still running after the verification returned", renewals)
	}
	all, _ := w.rdb.Keys(context.Background(), w.prefix+"*pay:order:*").Result()
	var keys []string
	for _, k := range all {
		// A release marker lives the lock client's release timeout, so a
		// resent release can tell it landed; it is not a lock.
		if !strings.Contains(k, ":released:") {
			keys = append(keys, k)
		}
	}
	if len(keys) != 0 {
		t.Errorf("order lock keys left after the verification: %v", keys)
	}
	// Once the provider is quick again, the same order is verified.
	if err := w.stub.SetConfig(payment.StubConfig{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the order paid after the provider recovered", func() bool {
		got, err := in.svc.Callback(context.Background(), o.ID)
		return err == nil && got.Status == seckill.OrderStatusPaid
	})
}

// TestRenewalKeepsASlowVerificationsLease: the database answers slowly, so
// the verification as a whole (read, query, write) takes longer than one
// lease. The watchdog renews the lease while it runs, so the write lands
// under a live lease; without renewal the lease ends and the write is cut.
func TestRenewalKeepsASlowVerificationsLease(t *testing.T) {
	w := newWorld(t, time.Hour, 5)
	cfg, err := mysql.ParseDSN(w.dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := toxic.New(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	const ttl = 300 * time.Millisecond
	in := w.instance(instanceOptions{lockTTL: ttl, mysqlAddr: proxy.Addr()})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)

	proxy.SetReplyDelay(ttl / 3) // read + BEGIN + UPDATE + COMMIT: more than one lease
	began := time.Now()
	got, err := in.svc.Callback(context.Background(), o.ID)
	took := time.Since(began)
	proxy.SetReplyDelay(0)
	if err != nil || got.Status != seckill.OrderStatusPaid {
		t.Fatalf("Callback on a slow database: %+v, %v; want paid", got, err)
	}
	if took < ttl {
		t.Errorf("the verification took %v, less than the %v lease: the test did not outlast a lease", took, ttl)
	}
	t.Logf("verification took %v under a %v lease", took, ttl)
	w.checkBooks()
}

// TestDelayQueueAfterEveryInstanceRestarted: orders fall due while no
// instance runs, and more fall due after a new instance started; the new
// instance expires the first soon after it starts and the others soon after
// their pay_by, because the queue is the orders table. Orders written with
// payments off have no pay_by and never expire.
func TestDelayQueueAfterEveryInstanceRestarted(t *testing.T) {
	const n = 10
	w := newWorld(t, time.Second, 2*n+1)
	first := w.instance(instanceOptions{})
	first.svc.Start()
	for u := int64(1); u <= n; u++ {
		w.buy(u)
	}
	w.orders.Orders.SetPaymentWindow(0)
	unpaidForever := w.buy(1000)
	if err := first.svc.Close(); err != nil { // every instance down
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // pay_by passes while nobody runs

	// Due after the restart: pending while the new instance starts.
	w.orders.Orders.SetPaymentWindow(2 * time.Second)
	var later []seckill.Order
	for u := int64(n + 1); u <= 2*n; u++ {
		later = append(later, w.buy(u))
	}
	second := w.instance(instanceOptions{})
	started := time.Now()
	second.svc.Start()
	testenv.WaitFor(t, 10*time.Second, "orders due at start-up expired", func() bool {
		counts, _ := w.books()
		return counts[seckill.OrderStatusExpired] >= n
	})
	t.Logf("%d orders overdue at start-up expired %v after the new instance started", n, time.Since(started).Round(time.Millisecond))

	// Each later order is seen expired how long after its pay_by? (The
	// contract says within 1 s; a loaded test machine only bounds it
	// loosely, and the measured lag is logged.)
	var worst time.Duration
	for _, o := range later {
		testenv.WaitFor(t, 10*time.Second, "order "+o.ID+" expired", func() bool {
			return statusOf(t, w.orders, o.ID) == seckill.OrderStatusExpired
		})
		worst = max(worst, time.Since(o.PayBy))
	}
	t.Logf("orders due after the restart: seen expired at most %v after pay_by", worst.Round(time.Millisecond))
	if worst > 5*time.Second {
		t.Errorf("an order was expired %v after its pay_by, want about a second", worst)
	}
	if s := statusOf(t, w.orders, unpaidForever.ID); s != seckill.OrderStatusCreated {
		t.Errorf("order written with payments off: %s, want created for ever", s)
	}
	w.checkBooks()
}

// TestCallbackOfUnknownOrder: a callback naming no order is not found, and
// changes nothing.
func TestCallbackOfUnknownOrder(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	in := w.instance(instanceOptions{})
	_, err := in.svc.Callback(context.Background(), "no-such-order")
	var se *seckill.Error
	if !errors.As(err, &se) || se.Code != seckill.EOrderNotFound {
		t.Errorf("Callback of an unknown order: %v, want order_not_found", err)
	}
	if err := in.svc.CheckSignature([]byte(`{"order_id":"x"}`), "00", ""); err == nil {
		t.Error("a wrong signature was accepted")
	}
}

// goroutinesIn counts the goroutines whose stack mentions fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// A verification that read the order created and heard "paid" from the
// provider finds, when it writes, that another writer (a trigger whose lease
// ran out) expired the order meanwhile. The provider's answer must decide
// again: a paid, expired order is refund_required. Acknowledging the callback
// with "expired" would tell the provider the payment was taken for nothing.
func TestPaidAnswerMeetingAnExpiryBecomesRefundRequired(t *testing.T) {
	w := newWorld(t, time.Hour, 5)
	in := w.instance(instanceOptions{lockTTL: 2 * time.Second})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	if err := w.stub.SetConfig(payment.StubConfig{Latency: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The verification's grant gets fence 101; the other writer's older
	// grant (50) still passes the order's status fence (0).
	fenceKey, err := lock.FenceKey(keys.NewSpace(w.prefix).PaymentFence(w.activity.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.rdb.IncrBy(ctx, fenceKey, 100).Err(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		got seckill.Order
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := in.svc.Callback(ctx, o.ID)
		done <- result{got, err}
	}()
	time.Sleep(200 * time.Millisecond) // the verification now waits on the provider
	if err := w.orders.Orders.ChangeStatus(ctx, order.StatusChange{OrderID: o.ID, ActivityID: o.ActivityID,
		From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 50}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.got.Status != seckill.OrderStatusRefundRequired {
		t.Fatalf("callback answered %q, %v; want refund_required", r.got.Status, r.err)
	}
	if got := statusOf(t, w.orders, o.ID); got != seckill.OrderStatusRefundRequired {
		t.Fatalf("order is %s, want refund_required", got)
	}
}
