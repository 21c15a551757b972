package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// Payments is what the HTTP edge needs of the payment flow;
// *payment.Service implements it. It is separate from Service: the purchase
// path knows nothing of payments.
type Payments interface {
	// CheckSignature returns an EUnauthenticated error unless signature is
	// the callback signature of body.
	CheckSignature(body []byte, signature string) error
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
func handlePaymentCallback(pay Payments) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := readBody(c.Request)
		if err != nil {
			respondError(c, err)
			return
		}
		sigs := c.Request.Header.Values("X-Signature")
		if len(sigs) != 1 {
			respondError(c, seckill.Errorf(seckill.EUnauthenticated, "exactly one X-Signature header is required"))
			return
		}
		if err := pay.CheckSignature(body, sigs[0]); err != nil {
			respondError(c, err)
			return
		}
		var hint struct {
			OrderID *string `json:"order_id"`
		}
		if err := json.Unmarshal(body, &hint); err != nil || hint.OrderID == nil || !visibleASCII(*hint.OrderID, maxOrderID) {
			respondError(c, invalid(`the body must be a JSON object with a string "order_id"`))
			return
		}
		o, err := pay.Callback(c.Request.Context(), *hint.OrderID)
		if err != nil {
			respondError(c, err)
			return
		}
		writeJSON(c, http.StatusOK, newOrderResponse(o))
	}
}
