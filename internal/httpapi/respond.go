package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// Codes the edge adds to the contract's: for requests no route serves, and
// for an address past the admin failure limit (adminlimit.go).
const (
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeTooManyRequests  = "too_many_requests"
)

// Keys of values handlers leave in the gin context for the middleware.
const (
	keyUserID    = "seckill.user_id"
	keyErrorCode = "seckill.error_code"
)

// minRetryAfter is what a busy or unavailable answer says when the error
// carries no wait of its own.
const minRetryAfter = time.Second

// statusOf is the one place where an error code becomes an HTTP status.
// ok is false for a code outside the contract.
func statusOf(code string) (status int, ok bool) {
	switch code {
	case seckill.EInvalid:
		return http.StatusBadRequest, true
	case seckill.EUnauthenticated:
		return http.StatusUnauthorized, true
	case seckill.EAdminDisabled, seckill.EUserRejected, seckill.ENotAdmitted:
		return http.StatusForbidden, true
	case seckill.EActivityNotFound, seckill.EOrderNotFound, seckill.ENotInQueue, codeNotFound:
		return http.StatusNotFound, true
	case codeMethodNotAllowed:
		return http.StatusMethodNotAllowed, true
	case seckill.ENotStarted, seckill.EEnded, seckill.ESoldOut, seckill.EAlreadyPurchased, seckill.EPaused, seckill.ENotEnoughStock:
		return http.StatusConflict, true
	case seckill.ENoWaitingRoom, seckill.ENotOpen, seckill.EAlreadyStarted:
		return http.StatusConflict, true
	case seckill.ENotCancellable, seckill.ERefundNotRequired: // admin tasks (admintasks.go)
		return http.StatusConflict, true
	case seckill.ETooLarge:
		return http.StatusRequestEntityTooLarge, true
	case seckill.EBusy, codeTooManyRequests:
		return http.StatusTooManyRequests, true
	case seckill.EUnavailable, seckill.EOutcomeUnknown:
		return http.StatusServiceUnavailable, true
	case seckill.EInternal:
		return http.StatusInternalServerError, true
	}
	return 0, false
}

type errorBody struct {
	Error       errorDetail `json:"error"`
	OrderID     string      `json:"order_id,omitempty"`     // with already_purchased
	OrderStatus string      `json:"order_status,omitempty"` // with already_purchased
	// RemainingStock is set with not_enough_stock, 0 included.
	RemainingStock *int64 `json:"remaining_stock,omitempty"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// contractError turns any error into the *seckill.Error a client is shown:
// its own when it carries a contract code, unavailable for a missed deadline
// or cancellation, internal (with no detail) for everything else.
func contractError(err error) *seckill.Error {
	var e *seckill.Error
	if errors.As(err, &e) {
		if _, ok := statusOf(e.Code); ok {
			return e
		}
	} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &seckill.Error{Code: seckill.EUnavailable, Message: "the request ran out of time; nothing was done", Err: err}
	}
	return &seckill.Error{Code: seckill.EInternal, Message: "internal error", Err: err}
}

// respondError answers err in the contract's shape and keeps it for the
// access log. The cause (Err) goes to the log, never to the client.
func respondError(c *gin.Context, err error) {
	e := contractError(err)
	status, _ := statusOf(e.Code)
	c.Set(keyErrorCode, e.Code)
	if status >= http.StatusInternalServerError {
		_ = c.Error(err)
	}
	if e.Retryable() || e.Code == codeTooManyRequests {
		c.Header("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	body := errorBody{Error: errorDetail{Code: e.Code, Message: e.Message}}
	if e.Code == seckill.EAlreadyPurchased {
		body.OrderID, body.OrderStatus = e.OrderID, e.OrderStatus
	}
	if e.Code == seckill.ENotEnoughStock {
		body.RemainingStock = &e.RemainingStock
	}
	if isTaskConflict(e.Code) {
		body.OrderID = e.OrderID
	}
	if body.Error.Message == "" {
		body.Error.Message = http.StatusText(status)
	}
	writeJSON(c, status, body)
}

// abortWithError answers err and stops the handler chain.
func abortWithError(c *gin.Context, err error) {
	respondError(c, err)
	c.Abort()
}

// retryAfterSeconds renders d as whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	d = max(d, minRetryAfter)
	secs := math.Ceil(d.Seconds())
	return strconv.FormatInt(int64(secs), 10)
}

// reply answers the error when there is one, and otherwise v with status:
// the end of a handler whose answer is one call's result.
func reply(c *gin.Context, status int, v any, err error) {
	if err != nil {
		respondError(c, err)
		return
	}
	writeJSON(c, status, v)
}

// writeJSON answers v as application/json. The Content-Type carries no
// charset parameter: JSON is UTF-8 by definition (RFC 8259).
//
// HTML is not escaped: answers are JSON for programs, and a message such as
// "Bearer <token>" should read as written, not as \u003ctoken\u003e.
//
// It is gin's c.Data without its allocations: the bytes are built in a
// pooled buffer (encodeAnswer) and the Content-Type is a shared value.
func writeJSON(c *gin.Context, status int, v any) {
	buf := answerBuffers.Get().(*[]byte)
	b, err := encodeAnswer((*buf)[:0], v)
	if err != nil {
		_ = c.Error(err)
		status = http.StatusInternalServerError
		b = append(b[:0], `{"error":{"code":"internal","message":"internal error"}}`...)
	}
	c.Status(status)
	if h := c.Writer.Header(); len(h["Content-Type"]) == 0 {
		h["Content-Type"] = headerJSON
	}
	if _, err := c.Writer.Write(b); err != nil {
		_ = c.Error(err)
		c.Abort()
	}
	if cap(b) <= maxPooledAnswer {
		*buf = b[:0]
		answerBuffers.Put(buf)
	}
}

// headerJSON is every JSON answer's Content-Type (setSharedHeader).
var headerJSON = []string{"application/json"}

// invalid is a 400 invalid_request with a message a client can act on.
func invalid(format string, args ...any) *seckill.Error {
	return seckill.Errorf(seckill.EInvalid, format, args...)
}
