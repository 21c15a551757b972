package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
)

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
