package jsonappend

import (
	"strconv"

	"github.com/seckill-oss/seckill"
)

// An order's body is every purchase's answer and, inside its envelope, every
// order event's payload.

// OrderBody appends o's JSON to b.
func OrderBody(b []byte, o seckill.OrderBody) []byte {
	b = append(b, '{')
	b = String(Member(b, "order_id", true), o.OrderID)
	b = strconv.AppendInt(Member(b, "activity_id", false), o.ActivityID, 10)
	b = strconv.AppendInt(Member(b, "user_id", false), o.UserID, 10)
	b = String(Member(b, "status", false), o.Status)
	b = strconv.AppendInt(Member(b, "quantity", false), o.Quantity, 10)
	b = String(Member(b, "created_at", false), o.CreatedAt)
	if o.PayBy != "" {
		b = String(Member(b, "pay_by", false), o.PayBy)
	}
	if o.PaidAt != "" {
		b = String(Member(b, "paid_at", false), o.PaidAt)
	}
	if o.PriceMinor != 0 {
		b = strconv.AppendInt(Member(b, "price_minor", false), o.PriceMinor, 10)
	}
	if o.AmountMinor != 0 {
		b = strconv.AppendInt(Member(b, "amount_minor", false), o.AmountMinor, 10)
	}
	if o.Currency != "" {
		b = String(Member(b, "currency", false), o.Currency)
	}
	if o.RefundReason != "" {
		b = String(Member(b, "refund_reason", false), o.RefundReason)
	}
	return append(b, '}')
}

// OrderEvent appends e's envelope, its data included, to b.
func OrderEvent(b []byte, e seckill.OrderEvent) []byte {
	b = append(b, '{')
	b = String(Member(b, "specversion", true), e.SpecVersion)
	b = String(Member(b, "id", false), e.ID)
	b = String(Member(b, "source", false), e.Source)
	b = String(Member(b, "type", false), e.Type)
	b = String(Member(b, "subject", false), e.Subject)
	b = String(Member(b, "time", false), e.Time)
	b = String(Member(b, "datacontenttype", false), e.DataContentType)
	b = strconv.AppendInt(Member(b, "sequence", false), e.Sequence, 10)
	b = OrderBody(Member(b, "data", false), e.Data)
	return append(b, '}')
}
