package payment

import (
	"testing"

	"github.com/seckill-oss/seckill"
)

// A payment proves the order's amount, quantity x price (docs/API.md
// "Quantity per buyer"): paying for one unit of an order of three is a
// mismatch, and the order is refunded, not paid.
// Can fail: checked against the unit price, the order of 3 is paid for 1.
func TestPaymentProvesQuantityTimesPrice(t *testing.T) {
	o := seckill.Order{Quantity: 3, PriceMinor: 1999, Currency: "EUR"}
	for _, c := range []struct {
		amount int64
		want   string
	}{{3 * 1999, ""}, {1999, seckill.RefundAmountMismatch}, {3*1999 + 1, seckill.RefundAmountMismatch}} {
		if got := mismatch(o, Payment{AmountMinor: c.amount, Currency: "EUR"}, proof{}); got != c.want {
			t.Errorf("paid %d for 3 x 1999: %q, want %q", c.amount, got, c.want)
		}
	}
}
