package order

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// TestOrderKeepsThePriceOfItsSale: an order carries the activity's price as
// it was when its unit was sold; a later price change moves new orders
// only, and an activity without a price sells orders without one.
func TestOrderKeepsThePriceOfItsSale(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		start := time.Now().UTC().Truncate(time.Second)
		a, err := s.Activities.CreateActivity(ctx, seckill.Activity{
			Name: "priced", TotalStock: 10, StartsAt: start, EndsAt: start.Add(time.Hour),
			PriceMinor: 1999, Currency: "EUR",
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Activities.Activity(ctx, a.ID); err != nil || got.PriceMinor != 1999 || got.Currency != "EUR" {
			t.Fatalf("Activity = %+v, %v; want price 1999 EUR", got, err)
		}
		first := payOrder(t, s, a, 1)
		if first.PriceMinor != 1999 || first.Currency != "EUR" {
			t.Errorf("order as written: %d %q, want 1999 EUR", first.PriceMinor, first.Currency)
		}
		if _, err := s.Activities.SetPrice(ctx, a.ID, 2500, "USD"); err != nil {
			t.Fatal(err)
		}
		second := payOrder(t, s, a, 2)
		for _, c := range []struct {
			id       string
			price    int64
			currency string
		}{{first.ID, 1999, "EUR"}, {second.ID, 2500, "USD"}} {
			got, err := s.Orders.OrderByID(ctx, c.id)
			if err != nil || got.PriceMinor != c.price || got.Currency != c.currency {
				t.Errorf("order %s read back: %d %q, %v; want %d %s", c.id, got.PriceMinor, got.Currency, err, c.price, c.currency)
			}
		}

		plain := newActivity(t, s, 10)
		if o := payOrder(t, s, plain, 3); o.PriceMinor != 0 || o.Currency != "" {
			t.Errorf("order of an activity without a price: %d %q, want none", o.PriceMinor, o.Currency)
		}
	})
}

// TestSetPriceRefusesAnInvalidPrice: a price comes with its currency, in
// range; the stored one is left as it was. An unknown activity is
// ErrActivityNotFound.
func TestSetPriceRefusesAnInvalidPrice(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		for _, bad := range []struct {
			price    int64
			currency string
		}{{0, "EUR"}, {100, ""}, {-1, "EUR"}, {seckill.MaxPriceMinor + 1, "EUR"}, {100, "eur"}, {100, "EURO"}} {
			if _, err := s.Activities.SetPrice(ctx, a.ID, bad.price, bad.currency); err == nil {
				t.Errorf("SetPrice(%d, %q) = nil, want an error", bad.price, bad.currency)
			}
		}
		if got, err := s.Activities.Activity(ctx, a.ID); err != nil || got.PriceMinor != 0 || got.Currency != "" {
			t.Errorf("after refused prices: %+v, %v; want no price", got, err)
		}
		if _, err := s.Activities.SetPrice(ctx, a.ID+1000, 100, "EUR"); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("SetPrice of an unknown activity: %v, want ErrActivityNotFound", err)
		}
	})
}

// TestMismatchedPaymentGivesTheUnitBack: created -> refund_required (a
// payment that does not match) records the reason and takes the unit off
// sold in the same transaction, as an expiry does.
func TestMismatchedPaymentGivesTheUnitBack(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		o := payOrder(t, s, a, 1)
		paidAt := time.Now().UTC().Truncate(time.Microsecond)
		err := s.Orders.ChangeStatus(ctx, StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusCreated,
			To: seckill.OrderStatusRefundRequired, PaidAt: paidAt, RefundReason: seckill.RefundAmountMismatch, Fence: 1})
		if err != nil {
			t.Fatal(err)
		}
		if n := sold(t, s, a.ID); n != 0 {
			t.Errorf("sold = %d after a mismatched payment, want 0: a refund_required order holds no unit", n)
		}
		got, err := s.Orders.OrderByID(ctx, o.ID)
		if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.RefundReason != seckill.RefundAmountMismatch || !got.PaidAt.Equal(paidAt) {
			t.Errorf("order = %+v, %v; want refund_required, amount_mismatch, paid_at %v", got, err, paidAt)
		}
		// Refunded keeps the reason.
		ro, err := s.Orders.MarkRefunded(ctx, o.ID, "ops", time.Now())
		if err != nil || ro.RefundReason != seckill.RefundAmountMismatch {
			t.Errorf("refunded order = %+v, %v; want the reason kept", ro, err)
		}
	})
}
