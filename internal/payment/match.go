package payment

import "github.com/seckill-oss/seckill"

// A paid answer proves the order paid only when it paid the order's price,
// in the order's currency, to this service's merchant (docs/API.md
// "Payments and expiry"): a tampered app that pays 0.01 against a real
// order, or pays another merchant, gets a refund, not the unit.

// proof is what a paid answer must show besides the order: the service's
// merchant id ("": not checked), and whether an order must have a price
// (SECKILL_STRICT: an unpriced order is never paid, since nothing says
// what paying it means).
type proof struct {
	merchant string
	priced   bool
}

// proofOf is the proof the service's configuration asks for.
func proofOf(cfg Config) proof { return proof{merchant: cfg.MerchantID, priced: cfg.RequirePrice} }

// mismatch returns why the paid answer p does not pay for o (its amount:
// quantity x price, docs/API.md "Quantity per buyer"), as a
// seckill.RefundReason value, or "" when it does. An order without a price
// (its activity had none) is not checked against an amount or currency,
// unless the proof requires a price. A paid answer that leaves out a field
// that is checked does not match.
func mismatch(o seckill.Order, p Payment, want proof) string {
	switch {
	case want.merchant != "" && p.MerchantID != want.merchant:
		return seckill.RefundMerchantMismatch
	case o.PriceMinor == 0 && o.Currency == "" && want.priced:
		return seckill.RefundNoPrice
	case o.PriceMinor == 0 && o.Currency == "":
		return ""
	case p.Currency != o.Currency:
		return seckill.RefundCurrencyMismatch
	case p.AmountMinor != o.AmountMinor():
		return seckill.RefundAmountMismatch
	}
	return ""
}

// settle is what a paid answer makes of a created order: paid when it
// matches, otherwise refund_required with the reason (the payment must go
// back, and the unit with it, as if the order had expired).
func settle(o seckill.Order, p Payment, want proof) (to, reason string) {
	if why := mismatch(o, p, want); why != "" {
		return seckill.OrderStatusRefundRequired, why
	}
	return seckill.OrderStatusPaid, ""
}
