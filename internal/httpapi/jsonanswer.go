package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// The answers of the hot path (a purchase's 201 and its refusals, a
// waiting room's join and poll, the probes' bodies) write their own JSON: byte for byte what encoding/json
// writes of them without HTML escaping (jsonanswer_test.go checks every
// field), without its reflection and with no allocation. Every other
// answer goes through encoding/json.

// jsonAppender is an answer that appends its own JSON to b.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// answerBuffers hold the answers' bytes while they are written: the
// response writer copies them, so a buffer goes back once written.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledAnswer is the largest buffer kept for reuse: a big admin listing
// should not pin its memory in the pool.
const maxPooledAnswer = 16 << 10

// encodeAnswer appends v's JSON to b, as encoding/json with SetEscapeHTML
// (false) would, without its final newline.
func encodeAnswer(b []byte, v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		return a.appendJSON(b), nil
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendString appends s as a JSON string. Printable ASCII other than '"'
// and '\\' is written as it is; anything else (control characters, non-
// ASCII, which encoding/json validates and escapes in part) is left to
// encoding/json, so the output is always its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return appendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendStringSlow(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendMember appends `,"name":` (no comma for the first member).
func appendMember(b []byte, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func (o orderResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendMember(b, "order_id", true), o.OrderID)
	b = strconv.AppendInt(appendMember(b, "activity_id", false), o.ActivityID, 10)
	b = strconv.AppendInt(appendMember(b, "user_id", false), o.UserID, 10)
	b = appendString(appendMember(b, "status", false), o.Status)
	b = strconv.AppendInt(appendMember(b, "quantity", false), o.Quantity, 10)
	b = appendString(appendMember(b, "created_at", false), o.CreatedAt)
	if o.PayBy != "" {
		b = appendString(appendMember(b, "pay_by", false), o.PayBy)
	}
	if o.PaidAt != "" {
		b = appendString(appendMember(b, "paid_at", false), o.PaidAt)
	}
	if o.PriceMinor != 0 {
		b = strconv.AppendInt(appendMember(b, "price_minor", false), o.PriceMinor, 10)
	}
	if o.AmountMinor != 0 {
		b = strconv.AppendInt(appendMember(b, "amount_minor", false), o.AmountMinor, 10)
	}
	if o.Currency != "" {
		b = appendString(appendMember(b, "currency", false), o.Currency)
	}
	if o.RefundReason != "" {
		b = appendString(appendMember(b, "refund_reason", false), o.RefundReason)
	}
	return append(b, '}')
}

func (d errorDetail) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendMember(b, "code", true), d.Code)
	b = appendString(appendMember(b, "message", false), d.Message)
	return append(b, '}')
}

func (e errorBody) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = e.Error.appendJSON(appendMember(b, "error", true))
	if e.OrderID != "" {
		b = appendString(appendMember(b, "order_id", false), e.OrderID)
	}
	if e.OrderStatus != "" {
		b = appendString(appendMember(b, "order_status", false), e.OrderStatus)
	}
	if e.RemainingStock != nil {
		b = strconv.AppendInt(appendMember(b, "remaining_stock", false), *e.RemainingStock, 10)
	}
	return append(b, '}')
}

func (s statusResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendMember(b, "status", true), s.Status)
	if s.Error != nil {
		b = s.Error.appendJSON(appendMember(b, "error", false))
	}
	return append(b, '}')
}

// A waiting room's join and poll answer (queue.go): the storm at a room's
// opening is all of these.
func (q queueResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = strconv.AppendInt(appendMember(b, "activity_id", true), q.ActivityID, 10)
	b = appendString(appendMember(b, "state", false), q.State)
	if q.Position != 0 {
		b = strconv.AppendInt(appendMember(b, "position", false), q.Position, 10)
	}
	if q.ETASeconds != nil {
		b = strconv.AppendInt(appendMember(b, "eta_s", false), *q.ETASeconds, 10)
	}
	if q.RefreshS != 0 {
		b = strconv.AppendInt(appendMember(b, "refresh_s", false), q.RefreshS, 10)
	}
	if q.AdmittedUntil != "" {
		b = appendString(appendMember(b, "admitted_until", false), q.AdmittedUntil)
	}
	if q.OrderID != "" {
		b = appendString(appendMember(b, "order_id", false), q.OrderID)
	}
	if q.Reason != "" {
		b = appendString(appendMember(b, "reason", false), q.Reason)
	}
	return append(b, '}')
}
