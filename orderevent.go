package seckill

import "time"

// OrderEvent is one order event as it leaves the service (docs/API.md "Order
// events"): a CloudEvents 1.0 envelope in JSON structured mode, written by
// hand rather than with the CloudEvents SDK (docs/DESIGN.md "Order events"
// says why). ID is the same on every redelivery; Sequence counts the
// order's events from 1, in the order they committed; Data is the order as
// the contract renders it, after the change.
type OrderEvent struct {
	SpecVersion     string    `json:"specversion"`
	ID              string    `json:"id"`
	Source          string    `json:"source"`
	Type            string    `json:"type"`
	Subject         string    `json:"subject"`
	Time            string    `json:"time"`
	DataContentType string    `json:"datacontenttype"`
	Sequence        int64     `json:"sequence"`
	Data            OrderBody `json:"data"`
}

// The envelope's fixed attributes.
const (
	CloudEventsVersion     = "1.0"
	CloudEventsSource      = "seckill"
	CloudEventsContentType = "application/json"
)

// OrderEventType is the event type of an order reaching status:
// order.created, order.paid, order.expired, order.refund_required,
// order.refunded.
func OrderEventType(status string) string { return "order." + status }

// NewOrderEvent is the event with the id that o's change to its current
// status, the order's sequence-th event, committed at at.
func NewOrderEvent(id string, o Order, sequence int64, at time.Time) OrderEvent {
	return OrderEvent{
		SpecVersion:     CloudEventsVersion,
		ID:              id,
		Source:          CloudEventsSource,
		Type:            OrderEventType(o.Status),
		Subject:         o.ID,
		Time:            FormatTime(at),
		DataContentType: CloudEventsContentType,
		Sequence:        sequence,
		Data:            o.Body(),
	}
}
