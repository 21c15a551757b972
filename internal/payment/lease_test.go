package payment_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

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
	_, proxy := testenv.ProxiedMySQL(t, testenv.MySQLConfig(t, w.dsn))
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
