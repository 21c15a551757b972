package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/jsonappend"
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

func (o orderResponse) appendJSON(b []byte) []byte {
	return jsonappend.OrderBody(b, seckill.OrderBody(o))
}

func (d errorDetail) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = jsonappend.String(jsonappend.Member(b, "code", true), d.Code)
	b = jsonappend.String(jsonappend.Member(b, "message", false), d.Message)
	return append(b, '}')
}

func (e errorBody) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = e.Error.appendJSON(jsonappend.Member(b, "error", true))
	if e.OrderID != "" {
		b = jsonappend.String(jsonappend.Member(b, "order_id", false), e.OrderID)
	}
	if e.OrderStatus != "" {
		b = jsonappend.String(jsonappend.Member(b, "order_status", false), e.OrderStatus)
	}
	if e.RemainingStock != nil {
		b = strconv.AppendInt(jsonappend.Member(b, "remaining_stock", false), *e.RemainingStock, 10)
	}
	return append(b, '}')
}

func (s statusResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = jsonappend.String(jsonappend.Member(b, "status", true), s.Status)
	if s.Error != nil {
		b = s.Error.appendJSON(jsonappend.Member(b, "error", false))
	}
	return append(b, '}')
}

// A waiting room's join and poll answer (queue.go): the storm at a room's
// opening is all of these.
func (q queueResponse) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = strconv.AppendInt(jsonappend.Member(b, "activity_id", true), q.ActivityID, 10)
	b = jsonappend.String(jsonappend.Member(b, "state", false), q.State)
	if q.Position != 0 {
		b = strconv.AppendInt(jsonappend.Member(b, "position", false), q.Position, 10)
	}
	if q.ETASeconds != nil {
		b = strconv.AppendInt(jsonappend.Member(b, "eta_s", false), *q.ETASeconds, 10)
	}
	if q.RefreshS != 0 {
		b = strconv.AppendInt(jsonappend.Member(b, "refresh_s", false), q.RefreshS, 10)
	}
	if q.AdmittedUntil != "" {
		b = jsonappend.String(jsonappend.Member(b, "admitted_until", false), q.AdmittedUntil)
	}
	if q.OrderID != "" {
		b = jsonappend.String(jsonappend.Member(b, "order_id", false), q.OrderID)
	}
	if q.Reason != "" {
		b = jsonappend.String(jsonappend.Member(b, "reason", false), q.Reason)
	}
	return append(b, '}')
}
