// Package seckill holds the domain of the flash-sale order service: activities,
// orders and the error codes every layer speaks. It imports nothing of Redis,
// SQL or HTTP; those live behind their own packages under internal/, and only
// cmd/seckill wires them together.
//
// The invariants the whole service exists to keep:
//   - no unit is sold twice: orders for an activity never exceed its total stock;
//   - nothing sold is lost: every 201 has its order row, and orders plus the
//     stock left in Redis equal the activity's total;
//   - no lock strands a buyer or an activity for longer than its lease.
package seckill

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Activity is one flash sale: a fixed number of units on sale in a time window.
type Activity struct {
	ID         int64
	Name       string
	TotalStock int64
	StartsAt   time.Time
	EndsAt     time.Time
	CreatedAt  time.Time
}

// Limits of an activity, from the contract.
const (
	MaxActivityName = 128        // characters
	MaxTotalStock   = 10_000_000 // units
)

// Validate reports, as an EInvalid *Error, what makes the activity one the
// contract does not allow: a name of 0 or more than MaxActivityName
// characters, a stock outside 1..MaxTotalStock, or a window that ends
// before it starts.
func (a Activity) Validate() error {
	if n := utf8.RuneCountInString(a.Name); n < 1 || n > MaxActivityName || !utf8.ValidString(a.Name) {
		return Errorf(EInvalid, "name must be 1 to %d characters", MaxActivityName)
	}
	if a.TotalStock < 1 || a.TotalStock > MaxTotalStock {
		return Errorf(EInvalid, "total_stock must be between 1 and %d", MaxTotalStock)
	}
	if !a.EndsAt.After(a.StartsAt) {
		return Errorf(EInvalid, "ends_at must be after starts_at")
	}
	return nil
}

// Status values of an activity, as the buyer API reports them.
const (
	StatusUpcoming = "upcoming"
	StatusActive   = "active"
	StatusSoldOut  = "sold_out"
	StatusEnded    = "ended"
)

// StatusAt reports the activity's status at now, given the units still on sale.
// An ended activity is "ended" whatever its stock; an active one with nothing
// left is "sold_out".
func (a Activity) StatusAt(now time.Time, remaining int64) string {
	switch {
	case now.Before(a.StartsAt):
		return StatusUpcoming
	case !now.Before(a.EndsAt):
		return StatusEnded
	case remaining <= 0:
		return StatusSoldOut
	default:
		return StatusActive
	}
}

// Order is one unit sold to one buyer. A buyer holds at most one order per activity.
type Order struct {
	ID             string
	ActivityID     int64
	UserID         int64
	Status         string
	IdempotencyKey string // empty when the request carried none
	Fence          int64  // the lock grant under which the order was written
	CreatedAt      time.Time
	// PayBy is when the order expires unless paid; zero when payments are off.
	PayBy time.Time
	// PaidAt is the payment provider's time of payment, on paid and
	// refund_required orders; zero otherwise.
	PaidAt time.Time
	// StatusFence is the per-order lock grant that last changed the status
	// (0: never changed).
	StatusFence int64
}

// Status values of an order. An order is created, then either paid or, when
// its window ends unpaid, expired (its unit goes back on sale); an expired
// order whose payment turns up later is refund_required. No other change
// happens.
const (
	OrderStatusCreated        = "created"
	OrderStatusPaid           = "paid"
	OrderStatusExpired        = "expired"
	OrderStatusRefundRequired = "refund_required"
)

// HoldsUnit reports whether an order with status keeps its unit sold: created
// and paid orders do; expired and refund_required ones gave it back.
func HoldsUnit(status string) bool {
	return status == OrderStatusCreated || status == OrderStatusPaid
}

// Error codes of the HTTP contract (docs/API.md). They belong to the domain;
// the HTTP layer maps each to a status code exactly once.
const (
	EInvalid          = "invalid_request"
	EUnauthenticated  = "unauthenticated"
	EAdminDisabled    = "admin_disabled"
	ETooLarge         = "request_too_large"
	EUserRejected     = "user_rejected"
	EActivityNotFound = "activity_not_found"
	EOrderNotFound    = "order_not_found"
	ENotStarted       = "not_started"
	EEnded            = "ended"
	ESoldOut          = "sold_out"
	EAlreadyPurchased = "already_purchased"
	EBusy             = "busy"
	EUnavailable      = "unavailable"
	// EOutcomeUnknown: the database became unreachable during the order
	// write and stayed so while the service looked for the outcome; the
	// order may exist (503 with Retry-After).
	EOutcomeUnknown = "outcome_unknown"
	EInternal       = "internal"
)

// Error is a failure a client can act on: a code from the contract, a message
// for a person, and, for some codes, extra data for the response.
type Error struct {
	Code    string
	Message string
	// OrderID is set with EAlreadyPurchased: the order the buyer already holds.
	OrderID string
	// OrderStatus is that order's status, when it could be read (with
	// EAlreadyPurchased; "" when only the order's id is known).
	OrderStatus string
	// RetryAfter is set with EBusy and EUnavailable: when to come back.
	RetryAfter time.Duration
	// Err is the cause, kept for logs and errors.Is; never shown to clients.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
