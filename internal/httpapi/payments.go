package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// Payments is what the HTTP edge needs of the payment flow;
// *payment.Service implements it. It is separate from Service: the purchase
// path knows nothing of payments.
type Payments interface {
	// CheckSignature returns an EUnauthenticated error unless signature is
	// the callback signature of body, with timestamp ("": none) its
	// X-Signature-Timestamp.
	CheckSignature(body []byte, signature, timestamp string) error
	// Callback verifies the named order's payment and returns the order.
	Callback(ctx context.Context, orderID string) (seckill.Order, error)
	// Refresh verifies a created order's payment for its result page and
	// returns the order after it; it never fails.
	Refresh(ctx context.Context, o seckill.Order) seckill.Order
	// Counts returns the activity's expired and refund_required orders.
	Counts(ctx context.Context, activityID int64) (expired, refundRequired int64, err error)
}

// maxOrderID bounds an order id in a callback: ids are UUIDs (36 characters).
const maxOrderID = 64

// handlePaymentCallback is the provider's notification. The signature is
// checked before anything of the body is read as JSON; the callback is only
// a hint, so everything but order_id is ignored and the provider is asked.
// The verification gets wait: a callback that finds the order busy or the
// provider slow is answered 503 with Retry-After then, not when the
// provider gives up on it.
func handlePaymentCallback(pay Payments, wait time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := readBody(c.Request)
		if err != nil {
			respondError(c, err)
			return
		}
		sig, ts, err := callbackSignature(c.Request.Header)
		if err == nil {
			err = pay.CheckSignature(body, sig, ts)
		}
		if err != nil {
			respondError(c, err)
			return
		}
		orderID, err := decodeCallback(body)
		if err != nil {
			respondError(c, err)
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), wait)
		defer cancel()
		o, err := pay.Callback(ctx, orderID)
		reply(c, http.StatusOK, newOrderResponse(o), err)
	}
}

// callbackSignature reads X-Signature, which must be sent once, and the
// optional X-Signature-Timestamp, at most once ("": not sent).
func callbackSignature(h http.Header) (signature, timestamp string, err error) {
	sigs := h.Values("X-Signature")
	if len(sigs) != 1 {
		return "", "", seckill.Errorf(seckill.EUnauthenticated, "exactly one X-Signature header is required")
	}
	switch ts := h.Values("X-Signature-Timestamp"); len(ts) {
	case 0:
		return sigs[0], "", nil
	case 1:
		if ts[0] != "" {
			return sigs[0], ts[0], nil
		}
	}
	return "", "", seckill.Errorf(seckill.EUnauthenticated, "X-Signature-Timestamp, when sent, must be sent once, in unix seconds")
}

// decodeCallback reads a callback body with the strict decoder of every
// other body (valid UTF-8, exactly one JSON object, member names exact and
// once each, nothing after it), except that members other than order_id
// are ignored: the contract lets providers send whatever else they like.
func decodeCallback(body []byte) (string, error) {
	var orderID string
	var has bool
	err := decodeObjectIgnoring(body, map[string]func(json.RawMessage) error{
		"order_id": func(raw json.RawMessage) error {
			s, ok := jsonString(raw)
			if !ok || !visibleASCII(s, maxOrderID) {
				return invalid(`"order_id" must be a string of 1 to %d visible ASCII characters`, maxOrderID)
			}
			orderID, has = s, true
			return nil
		},
	})
	if err == nil && !has {
		err = invalid(`the body must be a JSON object with a string "order_id"`)
	}
	return orderID, err
}
