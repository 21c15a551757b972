package seckill

import "time"

// OrderBody is an order as the contract renders it (docs/API.md "Orders"):
// the body of the HTTP answers and the `data` of every order event. One
// renderer for both, so that a field the contract adds to orders reaches
// the events without anyone remembering to add it there.
type OrderBody struct {
	OrderID    string `json:"order_id"`
	ActivityID int64  `json:"activity_id"`
	UserID     int64  `json:"user_id"`
	Status     string `json:"status"`
	// Quantity is the units the order holds (docs/API.md "Quantity per
	// buyer"): always there, 1 for a one-unit order.
	Quantity  int64  `json:"quantity"`
	CreatedAt string `json:"created_at"`
	PayBy     string `json:"pay_by,omitempty"`  // absent while payments are off
	PaidAt    string `json:"paid_at,omitempty"` // on paid and refund_required orders
	// The price the unit was sold at, which a payment must match; absent
	// when the activity had no price.
	PriceMinor int64 `json:"price_minor,omitempty"`
	// AmountMinor is quantity x price_minor, what a payment must prove;
	// absent with the price.
	AmountMinor  int64  `json:"amount_minor,omitempty"`
	Currency     string `json:"currency,omitempty"`
	RefundReason string `json:"refund_reason,omitempty"` // on refund_required and refunded orders
}

// Body renders o as the contract shows an order.
func (o Order) Body() OrderBody {
	return OrderBody{
		OrderID:      o.ID,
		ActivityID:   o.ActivityID,
		UserID:       o.UserID,
		Status:       o.Status,
		Quantity:     o.Units(),
		CreatedAt:    FormatTime(o.CreatedAt),
		PayBy:        FormatOptionalTime(o.PayBy),
		PaidAt:       FormatOptionalTime(o.PaidAt),
		PriceMinor:   o.PriceMinor,
		AmountMinor:  o.AmountMinor(),
		Currency:     o.Currency,
		RefundReason: o.RefundReason,
	}
}

// FormatTime renders t as the contract writes times: RFC 3339 in UTC, with
// the fraction it carries.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// FormatOptionalTime is FormatTime, or "" for the zero time.
func FormatOptionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return FormatTime(t)
}
