package jsonappend_test

import (
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/jsonappend"
	"github.com/seckill-oss/seckill/internal/testkit/jsoncheck"
)

// An order's body and its event's envelope are written as encoding/json
// writes them.
func TestOrderIsEncodingJSON(t *testing.T) {
	jsoncheck.Check(t, func(o seckill.OrderBody, b []byte) []byte { return jsonappend.OrderBody(b, o) })
	jsoncheck.Check(t, func(e seckill.OrderEvent, b []byte) []byte { return jsonappend.OrderEvent(b, e) })
}
