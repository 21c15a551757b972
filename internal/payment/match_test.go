package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
)

const merchant = "merchant-1"

// pricedWorld is a world whose activity costs 19.99 EUR, with a stub that
// answers each order's price (read from the order store) and the merchant.
func pricedWorld(t *testing.T, total int64) *world {
	t.Helper()
	w := newWorld(t, time.Hour, total)
	var err error
	if w.activity, err = w.orders.Activities.SetPrice(context.Background(), w.activity.ID, 1999, "EUR"); err != nil {
		t.Fatal(err)
	}
	w.stub.SetMerchantID(merchant)
	w.stub.SetPriceLookup(func(ctx context.Context, id string) (int64, string, bool, error) {
		o, err := w.orders.Orders.OrderByID(ctx, id)
		return o.PriceMinor, o.Currency, o.PriceMinor > 0, err
	})
	return w
}

// TestPaymentMustMatchTheOrder: a paid answer makes an order paid only
// when it paid the order's price, in its currency, to this merchant.
// Anything else makes it refund_required with the reason, and its unit goes
// back on sale (the books balance). A tampered app paying 0.01 gets a
// refund, not the unit.
func TestPaymentMustMatchTheOrder(t *testing.T) {
	cent := int64(1)
	tests := []struct {
		name       string
		pay        payment.StubPayment
		merchantID string // the service's; "" checks none
		want       string
		reason     string
	}{
		{"the order's price", payment.StubPayment{}, merchant, seckill.OrderStatusPaid, ""},
		{"a cent", payment.StubPayment{AmountMinor: &cent, Currency: "EUR"}, merchant, seckill.OrderStatusRefundRequired, seckill.RefundAmountMismatch},
		{"wrong amount", payment.StubPayment{Wrong: payment.WrongAmount}, merchant, seckill.OrderStatusRefundRequired, seckill.RefundAmountMismatch},
		{"wrong currency", payment.StubPayment{Wrong: payment.WrongCurrency}, merchant, seckill.OrderStatusRefundRequired, seckill.RefundCurrencyMismatch},
		{"wrong merchant", payment.StubPayment{Wrong: payment.WrongMerchant}, merchant, seckill.OrderStatusRefundRequired, seckill.RefundMerchantMismatch},
		{"merchant not checked", payment.StubPayment{MerchantID: "anyone"}, "", seckill.OrderStatusPaid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := pricedWorld(t, 3)
			in := w.instance(instanceOptions{merchantID: tt.merchantID})
			o := w.buy(1)
			if o.PriceMinor != 1999 || o.Currency != "EUR" {
				t.Fatalf("order price %d %q, want 1999 EUR", o.PriceMinor, o.Currency)
			}
			tt.pay.Status = payment.PaymentPaid
			if err := w.stub.SetPaymentAs(o.ID, tt.pay); err != nil {
				t.Fatal(err)
			}
			got, err := in.svc.Callback(context.Background(), o.ID)
			if err != nil || got.Status != tt.want || got.RefundReason != tt.reason {
				t.Fatalf("callback: %q (%q), %v; want %q (%q)", got.Status, got.RefundReason, err, tt.want, tt.reason)
			}
			stored, err := w.orders.Orders.OrderByID(context.Background(), o.ID)
			if err != nil || stored.Status != tt.want || stored.RefundReason != tt.reason || stored.PaidAt.IsZero() {
				t.Errorf("stored: %+v, %v; want %q (%q) with paid_at", stored, err, tt.want, tt.reason)
			}
			w.checkBooks()
			if _, left := w.books(); tt.want == seckill.OrderStatusRefundRequired && left != 3 {
				t.Errorf("Redis stock %d after a refund_required order, want its unit back: 3", left)
			}
		})
	}
}

// TestPaidAnswerWithoutAmount: a provider that says paid but leaves the
// amount out proves nothing about a priced order.
func TestPaidAnswerWithoutAmount(t *testing.T) {
	w := pricedWorld(t, 2)
	w.stub.SetPriceLookup(nil)
	in := w.instance(instanceOptions{merchantID: merchant})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	got, err := in.svc.Callback(context.Background(), o.ID)
	if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.RefundReason != seckill.RefundCurrencyMismatch {
		t.Fatalf("callback: %q (%q), %v; want refund_required, currency_mismatch", got.Status, got.RefundReason, err)
	}
}

// TestUnpricedOrderNeedsNoAmount: an order of an activity without a price
// (a client that sends none) is paid as before prices: only the merchant,
// when configured, is checked.
func TestUnpricedOrderNeedsNoAmount(t *testing.T) {
	w := newWorld(t, time.Hour, 2)
	w.stub.SetMerchantID(merchant)
	in := w.instance(instanceOptions{merchantID: merchant})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	got, err := in.svc.Callback(context.Background(), o.ID)
	if err != nil || got.Status != seckill.OrderStatusPaid {
		t.Fatalf("callback: %q, %v; want paid", got.Status, err)
	}
}

// TestStrictRefusesUnpricedPayment: with a price required (SECKILL_STRICT),
// a paid answer for an order without a price is refund_required no_price:
// nothing says what paying it means, so "amount_minor":1 in "XXX" must not
// make it paid.
// Can fail: without the no_price rule, the order is paid.
func TestStrictRefusesUnpricedPayment(t *testing.T) {
	w := newWorld(t, time.Hour, 2)
	w.stub.SetMerchantID(merchant)
	in := w.instance(instanceOptions{merchantID: merchant, requirePrice: true})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	got, err := in.svc.Callback(context.Background(), o.ID)
	if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.RefundReason != seckill.RefundNoPrice {
		t.Fatalf("callback: %q (%q), %v; want refund_required, no_price", got.Status, got.RefundReason, err)
	}
}

// TestLatePaymentRecordsItsReason: an expired order found paid is
// refund_required "paid_late"; paid late and wrong, the mismatch is named.
func TestLatePaymentRecordsItsReason(t *testing.T) {
	w := pricedWorld(t, 3)
	in := w.instance(instanceOptions{merchantID: merchant})
	ctx := context.Background()
	for _, c := range []struct {
		user   int64
		pay    payment.StubPayment
		reason string
	}{{1, payment.StubPayment{}, seckill.RefundPaidLate}, {2, payment.StubPayment{Wrong: payment.WrongAmount}, seckill.RefundAmountMismatch}} {
		o := w.buy(c.user)
		if _, err := in.svc.Cancel(ctx, o.ActivityID, o.UserID); err != nil {
			t.Fatal(err)
		}
		c.pay.Status = payment.PaymentPaid
		if err := w.stub.SetPaymentAs(o.ID, c.pay); err != nil {
			t.Fatal(err)
		}
		got, err := in.svc.Callback(ctx, o.ID)
		if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.RefundReason != c.reason {
			t.Errorf("user %d: %q (%q), %v; want refund_required (%q)", c.user, got.Status, got.RefundReason, err, c.reason)
		}
	}
	w.checkBooks()
}

// TestCancelOfAWrongPayment: a buyer who cancels after paying the wrong
// amount does not get a paid order; the order is refund_required, the unit
// back on sale, and the cancel is refused as for any order not created.
func TestCancelOfAWrongPayment(t *testing.T) {
	w := pricedWorld(t, 2)
	in := w.instance(instanceOptions{merchantID: merchant})
	o := w.buy(1)
	if err := w.stub.SetPaymentAs(o.ID, payment.StubPayment{Status: payment.PaymentPaid, Wrong: payment.WrongAmount}); err != nil {
		t.Fatal(err)
	}
	got, err := in.svc.Cancel(context.Background(), o.ActivityID, o.UserID)
	var se *seckill.Error
	if !errors.As(err, &se) || se.Code != seckill.ENotCancellable || got.Status != seckill.OrderStatusRefundRequired {
		t.Fatalf("cancel: %q, %v; want refund_required and order_not_cancellable", got.Status, err)
	}
	if s := statusOf(t, w.orders, o.ID); s != seckill.OrderStatusRefundRequired {
		t.Errorf("order is %s, want refund_required", s)
	}
	w.checkBooks()
}

// TestProviderAPIKey: with an API key the provider client sends it, and a
// provider that requires it answers; without it, the answer is unknown and
// the order stays created.
func TestProviderAPIKey(t *testing.T) {
	w := newWorld(t, time.Hour, 2)
	w.stub.RequireAPIKey("k-123")
	without := w.instance(instanceOptions{})
	with := w.instance(instanceOptions{apiKey: "k-123"})
	o := w.buy(1)
	w.stub.SetPayment(o.ID, payment.PaymentPaid)
	if got, err := without.svc.Callback(context.Background(), o.ID); err == nil || got.Status == seckill.OrderStatusPaid {
		t.Errorf("without the key: %q, %v; want unavailable", got.Status, err)
	}
	if got, err := with.svc.Callback(context.Background(), o.ID); err != nil || got.Status != seckill.OrderStatusPaid {
		t.Errorf("with the key: %q, %v; want paid", got.Status, err)
	}
}
