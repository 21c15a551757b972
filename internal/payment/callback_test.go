package payment_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/payment"
)

// TestCallbacksAskTheProviderAtMostOnceASecond: 20 callbacks for one order
// within a second (a provider retrying, or a replay) cost two provider
// queries, not 20: the first callback's, and one a second later that
// answers the 19 that came in between. A payment that lands among them is
// not lost: those 19 were answered by a query made after they arrived.
func TestCallbacksAskTheProviderAtMostOnceASecond(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	in := w.instance(instanceOptions{})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPending)
	ctx := context.Background()

	start := time.Now()
	first, err := in.svc.Callback(ctx, o.ID)
	if err != nil || first.Status != seckill.OrderStatusCreated {
		t.Fatalf("first callback: %+v, %v; want created", first, err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answers []string
	)
	for i := range 19 {
		if i == 5 {
			w.stub.SetPayment(o.ID, payment.PaymentPaid) // the payment lands mid-burst
		}
		wg.Go(func() {
			v, err := in.svc.Callback(ctx, o.ID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("callback: %v", err)
			}
			answers = append(answers, v.Status)
		})
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	if n := w.stub.Requests(o.ID); n != 2 {
		t.Errorf("20 callbacks within a second: %d provider queries, want 2 (one a second)", n)
	}
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("the second query came %v after the first, want about a second", took)
	}
	for _, s := range answers {
		if s != seckill.OrderStatusPaid {
			t.Errorf("answers after the payment landed: %v, want all paid", answers)
			break
		}
	}
	if got := in.counter(t, "seckill_payment_verifications_total", map[string]string{"trigger": "callback", "outcome": "coalesced"}); got != 18 {
		t.Errorf("coalesced callbacks: %v, want 18", got)
	}
}

// A callback that finds another verification holding the order's lock
// waits for it past a lease (the holder's lease is renewed while it works),
// and is answered as soon as the holder's answer is written, without the
// lock: the callbacks that waited together do not take it in turn.
//
// Can fail: with the wait bounded by one lease, the callback gives up after
// 1 s with "another verification of the order is running" (503) while the
// holder is still writing; with the answer looked for only under the lock,
// it is answered after the release, not before.
func TestACallbackWaitsForTheHolderNotForALease(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	in := w.instance(instanceOptions{}) // a lease of 1 s
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPending)
	ctx := context.Background()
	space := keys.NewSpace(w.prefix)

	locks := lock.New(w.rdb, nil)
	defer locks.Close()
	holder, err := locks.Obtain(ctx, space.PaymentOrderLock(o.ActivityID, o.ID), time.Second,
		&lock.ObtainOptions{AutoRenew: true, FenceOf: space.PaymentFence(o.ActivityID)})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	done := in.callbackInBackground(ctx, o.ID)
	time.Sleep(1500 * time.Millisecond) // the holder's work outlasts a lease
	select {
	case got := <-done:
		t.Fatalf("callback answered while the holder still verified: %+v, %v", got.o.Status, got.err)
	default:
	}
	// The holder's query, begun after the callback arrived, is answered.
	counts := space.PaymentQueryCounts(o.ActivityID, o.ID)
	if err := w.rdb.HSet(ctx, counts, "started", 1, "answered", 1).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got.err != nil || got.o.Status != seckill.OrderStatusCreated {
			t.Errorf("callback: %+v, %v; want the order as the holder's answer left it, created", got.o.Status, got.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the callback was not answered within 5 s of the holder's answer, while the holder kept the lock")
	}
	if n := w.stub.Requests(o.ID); n != 0 {
		t.Errorf("the callback asked the provider %d times, want 0: the holder's query answered it", n)
	}
	if got := in.counter(t, "seckill_payment_verifications_total", map[string]string{"trigger": "callback", "outcome": "coalesced"}); got != 1 {
		t.Errorf("coalesced callbacks: %v, want 1", got)
	}
}

// TestCallbackOfAnOrderExpiredLongAgo: a callback for an order whose window
// closed more than a day ago answers the order without asking the provider
// (a replay, or the operator's to reconcile), even when it would find a
// payment.
func TestCallbackOfAnOrderExpiredLongAgo(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPending)
	ctx := context.Background()
	// Just after pay_by, a callback expires the order.
	soon := w.instance(instanceOptions{now: func() time.Time { return o.PayBy.Add(time.Minute) }})
	if v, err := soon.svc.Callback(ctx, o.ID); err != nil || v.Status != seckill.OrderStatusExpired {
		t.Fatalf("callback after pay_by: %+v, %v; want expired", v, err)
	}
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	asked := w.stub.Requests(o.ID)
	later := w.instance(instanceOptions{now: func() time.Time { return o.PayBy.Add(24*time.Hour + time.Minute) }})
	v, err := later.svc.Callback(ctx, o.ID)
	if err != nil || v.Status != seckill.OrderStatusExpired {
		t.Errorf("callback a day after pay_by: %+v, %v; want the order as it is, expired", v, err)
	}
	if n := w.stub.Requests(o.ID); n != asked {
		t.Errorf("callback a day after pay_by asked the provider (%d queries, want %d)", n, asked)
	}
	if s := statusOf(t, w.orders, o.ID); s != seckill.OrderStatusExpired {
		t.Errorf("order %s, want expired", s)
	}
}

// A callback is answered after a query that started after it arrived and
// succeeded, never from one that failed. Here the callback arrives, then,
// while it waits for the order's lock, another trigger counts a query and
// fails (no answer from the provider): the callback must still query, and
// finds the payment.
//
// Can fail: acknowledged from the moved count alone, the callback answers
// 200 with the order still created, and the provider stops resending.
func TestCallbackIsNotAnsweredByAFailedQuery(t *testing.T) {
	w := newWorld(t, time.Hour, 1)
	in := w.instance(instanceOptions{lockTTL: 3 * time.Second})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	ctx := context.Background()

	// Another trigger's verification holds the order's lock.
	locks := lock.New(w.rdb, nil)
	defer locks.Close()
	other, err := locks.Obtain(ctx, keys.NewSpace(w.prefix).PaymentOrderLock(o.ActivityID, o.ID), 3*time.Second,
		&lock.ObtainOptions{FenceOf: keys.NewSpace(w.prefix).PaymentFence(o.ActivityID)})
	if err != nil {
		t.Fatal(err)
	}
	done := in.callbackInBackground(ctx, o.ID)
	time.Sleep(time.Second) // the callback arrived and waits for the lock
	// The holder counts its query, which then fails, and releases.
	if err := w.rdb.HIncrBy(ctx, keys.NewSpace(w.prefix).PaymentQueryCounts(o.ActivityID, o.ID), "started", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err == nil && got.o.Status != seckill.OrderStatusPaid {
		t.Fatalf("callback answered %s without error; want paid, or an error (503) so the provider sends it again", got.o.Status)
	}
	if got.err != nil {
		t.Logf("callback: %v", got.err)
	}
}

// A callback that arrives after the order's query count expired, but just
// after a query begun before it was answered, is not answered from that
// query: the provider is asked again, so a payment that landed meanwhile is
// seen. Here the count lives 0.5 s and the provider takes 0.7 s, so the
// first query's answer comes after its count expired.
// Can fail: with the answered number kept apart from the count, under a TTL
// of its own set when the answer is written, the second callback reads a
// count of 0 and an answered number of 1 and answers created.
func TestCallbackAfterTheCountExpiredAsksTheProvider(t *testing.T) {
	defer payment.SetQueriesTTL(500 * time.Millisecond)()
	w := newWorld(t, time.Hour, 1)
	in := w.instance(instanceOptions{lockTTL: 3 * time.Second})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPending)
	if err := w.stub.SetConfig(payment.StubConfig{Latency: 700 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := in.svc.Callback(ctx, o.ID); err != nil || v.Status != seckill.OrderStatusCreated {
		t.Fatalf("first callback: %+v, %v; want created", v, err)
	}
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	asked := w.stub.Requests(o.ID)
	v, err := in.svc.Callback(ctx, o.ID)
	if err != nil || v.Status != seckill.OrderStatusPaid {
		t.Errorf("callback after the payment landed: %+v, %v; want paid", v.Status, err)
	}
	if n := w.stub.Requests(o.ID); n != asked+1 {
		t.Errorf("provider queries by the second callback: %d, want 1", n-asked)
	}
}
