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
	"errors"
	"fmt"
	"time"
)

// Activity is one flash sale: a fixed number of units on sale in a time window.
type Activity struct {
	ID         int64
	Name       string
	TotalStock int64
	StartsAt   time.Time
	EndsAt     time.Time
	CreatedAt  time.Time
	// PriceMinor is the price of one unit in the currency's minor units
	// (cents); 0 with Currency "": the activity has no price (made before
	// prices, or by a client that sends none), and a payment of its orders
	// is not checked against an amount.
	PriceMinor int64
	// Currency is the ISO 4217 code of the price, such as EUR; "" without a
	// price.
	Currency string
	// WaitingRoom is the activity's waiting room; nil: it has none, and
	// anyone may buy in the window.
	WaitingRoom *WaitingRoom
	// Unannounced hides the activity from buyers until StartsAt: they are
	// told activity_not_found, so walking ids does not show upcoming sales.
	Unannounced bool
	// PausedAt is when ops paused the sale (docs/API.md "Stopping a
	// sale"); zero while it is not paused.
	PausedAt time.Time
	// PerUserLimit is how many units one buyer may take in the one order
	// they may hold (docs/API.md "Quantity per buyer"); 0 means 1.
	PerUserLimit int64
}

// Limits of an activity's per-user limit (docs/API.md "Quantity per buyer").
const (
	DefaultPerUserLimit = 1
	MaxPerUserLimit     = 100
)

// Limit is the most units one buyer may take: PerUserLimit, at least 1.
func (a Activity) Limit() int64 { return max(a.PerUserLimit, DefaultPerUserLimit) }

// ValidatePerUserLimit checks a per-user limit as ops give it.
func ValidatePerUserLimit(n int64) error {
	if n < 1 || n > MaxPerUserLimit {
		return Errorf(EInvalid, "per_user_limit must be an integer in 1..%d", MaxPerUserLimit)
	}
	return nil
}

// WaitingRoom lets buyers in by a fair line instead of by speed (docs/API.md
// "Waiting room"): who joins between OpensAt and the start gets a place
// drawn at random at the start, later joiners queue behind in arrival order,
// and only admitted buyers may buy.
type WaitingRoom struct {
	OpensAt time.Time
	// Seed fixes the random places of the pre-queue (the draw): ops see it
	// only once the sale has started, so that anyone can then check the
	// draw, and nobody could aim at a place before.
	Seed string
}

// DefaultWaitingRoomLead is how long before the start a waiting room opens
// when ops give no opens_at.
const DefaultWaitingRoomLead = 30 * time.Minute

// States of a buyer's place in a waiting room.
const (
	QueuePrequeue = "prequeue" // joined before the start; no position yet
	QueueWaiting  = "waiting"
	QueueAdmitted = "admitted" // may buy until AdmittedUntil
	QueueLapsed   = "lapsed"   // the admission ran out unused
	QueueDone     = "done"     // holds an order
	QueueClosed   = "closed"   // the room admits no one any more (Reason)
)

// QueueStatus is one buyer's standing in an activity's waiting room.
type QueueStatus struct {
	ActivityID int64
	State      string
	// Position is 1 + the places ahead not yet admitted, while waiting.
	Position int64
	// ETA is the estimate of the time until admission; HasETA is false when
	// there is none.
	ETA    time.Duration
	HasETA bool
	// Refresh is when the buyer should ask again; 0 in a final state.
	Refresh       time.Duration
	AdmittedUntil time.Time // while admitted
	OrderID       string    // when done
	Reason        string    // when closed: sold_out, ended, or a purchase's final refusal
}

// Limits of an activity, from the contract.
const (
	MaxActivityName = 128               // characters
	MaxTotalStock   = 10_000_000        // units
	MaxPriceMinor   = 1_000_000_000_000 // minor units: exact in every JSON number
)

// ValidPrice reports, as an EInvalid *Error, what makes a price one the
// contract does not allow: a price and a currency come together (or neither
// is given: 0 and ""), the price is 1..MaxPriceMinor minor units and the
// currency three capital letters (ISO 4217).
func ValidPrice(priceMinor int64, currency string) error {
	if priceMinor == 0 && currency == "" {
		return nil
	}
	if priceMinor < 1 || priceMinor > MaxPriceMinor {
		return Errorf(EInvalid, "price_minor must be an integer in 1..%d (minor units, e.g. cents), given with currency", MaxPriceMinor)
	}
	if !validCurrency(currency) {
		return Errorf(EInvalid, "currency must be an ISO 4217 code of three capital letters, such as EUR, given with price_minor")
	}
	return nil
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

// Validate reports, as an EInvalid *Error, what makes the activity one the
// contract does not allow: a name ValidateName refuses, a stock outside
// 1..MaxTotalStock, a window that ends before it starts, or a price
// ValidPrice refuses.
func (a Activity) Validate() error {
	if err := ValidateName(a.Name); err != nil {
		return err
	}
	if a.TotalStock < 1 || a.TotalStock > MaxTotalStock {
		return Errorf(EInvalid, "total_stock must be between 1 and %d", MaxTotalStock)
	}
	if !a.EndsAt.After(a.StartsAt) {
		return Errorf(EInvalid, "ends_at must be after starts_at")
	}
	if w := a.WaitingRoom; w != nil && w.OpensAt.After(a.StartsAt) {
		return Errorf(EInvalid, "waiting_room.opens_at must be at or before starts_at")
	}
	if err := a.roomCanDraw(); err != nil {
		return err
	}
	return ValidPrice(a.PriceMinor, a.Currency)
}

// roomCanDraw refuses an unannounced activity with a waiting room, which
// opens at or before its start (Validate): the draw needs joins before the
// start, and an unannounced activity answers them 404, so places would go
// by arrival. A room opening exactly at the start has no draw either.
func (a Activity) roomCanDraw() error {
	if w := a.WaitingRoom; w != nil && a.Unannounced && !w.OpensAt.After(a.StartsAt) {
		return Errorf(EInvalid, "announced: false cannot go with a waiting_room whose opens_at is at or before starts_at: "+
			"buyers cannot join an unannounced sale before its start, so its room has no draw and places would go by arrival; announce the activity, or sell it without a waiting room")
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

// Order is what one buyer bought of an activity: Quantity units, in one
// order. A buyer holds at most one order per activity.
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
	// PriceMinor and Currency are the activity's price when the unit was
	// sold, the amount a payment must match; 0 and "" when the activity had
	// no price.
	PriceMinor int64
	Currency   string
	// RefundReason says why a refund_required (or refunded) order must be
	// refunded, one of the RefundReason values; "" on other orders.
	RefundReason string
	// Quantity is the units the order holds; 0 means 1 (an order built
	// before quantities, or by a caller that sets none).
	Quantity int64
}

// Units is the units the order holds: its quantity, at least 1.
func (o Order) Units() int64 { return max(o.Quantity, 1) }

// AmountMinor is what a payment of the order must prove: its units times
// the price each was sold at (0 when the activity had no price).
func (o Order) AmountMinor() int64 { return o.Units() * o.PriceMinor }

// Why an order's payment must be refunded.
const (
	// RefundPaidLate: the payment landed after the order expired.
	RefundPaidLate = "paid_late"
	// RefundAmountMismatch: the amount paid is not the order's price.
	RefundAmountMismatch = "amount_mismatch"
	// RefundCurrencyMismatch: the payment is in another currency.
	RefundCurrencyMismatch = "currency_mismatch"
	// RefundMerchantMismatch: the payment went to another merchant.
	RefundMerchantMismatch = "merchant_mismatch"
	// RefundNoPrice: the order has no price, so no payment can prove it
	// paid (with SECKILL_STRICT).
	RefundNoPrice = "no_price"
)

// Status values of an order. An order is created, then either paid or, when
// its window ends unpaid, expired (its unit goes back on sale); an expired
// order whose payment turns up later is refund_required, and so is a created
// one whose payment does not match its price, currency or merchant (its unit
// goes back on sale). No other change happens.
const (
	OrderStatusCreated        = "created"
	OrderStatusPaid           = "paid"
	OrderStatusExpired        = "expired"
	OrderStatusRefundRequired = "refund_required"
	// OrderStatusRefunded: a refund_required order whose refund an operator
	// marked done. It holds no unit.
	OrderStatusRefunded = "refunded"
)

// AdminOrder is an order with what only operators see.
type AdminOrder struct {
	Order
	RefundedBy string    // on refunded orders
	RefundedAt time.Time // on refunded orders
}

// MaxPage bounds a page of an admin listing.
const MaxPage = 500

// KeepsUnit reports whether an order with status keeps its unit sold: created
// and paid orders do; expired and refund_required ones gave it back.
func KeepsUnit(status string) bool {
	return status == OrderStatusCreated || status == OrderStatusPaid
}

// RetryAfter is when a caller told busy, unavailable or outcome_unknown
// should come back, unless the error says otherwise.
const RetryAfter = time.Second

// Unavailable is an EUnavailable error: a dependency failed or did not
// answer in time, and msg says what that means for the caller (most often
// that nothing changed).
func Unavailable(msg string, err error) *Error {
	return &Error{Code: EUnavailable, Message: msg, RetryAfter: RetryAfter, Err: err}
}

// AlreadyPurchased is the EAlreadyPurchased answer to a buyer who holds o, with its
// id and status ("" when only the id is known). The message says what the
// order's status means for the buyer: an expired order (cancelled, or not
// paid in time) is not a purchase, yet it is still their one order of the
// sale.
func AlreadyPurchased(o Order) *Error {
	return &Error{Code: EAlreadyPurchased, Message: holdsMessage(o.Status), OrderID: o.ID, OrderStatus: o.Status}
}

func holdsMessage(status string) string {
	switch status {
	case OrderStatusCreated:
		return "this user already holds an unpaid order for this activity: pay it (order_id)"
	case OrderStatusPaid:
		return "this user already bought this activity (order_id, paid)"
	case OrderStatusExpired:
		return "this user's order of this sale was cancelled or expired unpaid; a user has one order per sale, so this user cannot buy it again"
	case OrderStatusRefundRequired, OrderStatusRefunded:
		return "this user's order of this sale was paid late or wrongly and is being (or was) refunded; a user has one order per sale, so this user cannot buy it again"
	}
	return "this user already holds an order for this activity"
}

// Ended is the EEnded answer for activity a.
func Ended(a Activity) *Error {
	return Errorf(EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
}

// NotEnoughStock is the ENotEnoughStock answer: left units were left,
// fewer than the buyer asked for; nothing was sold.
func NotEnoughStock(left int64) *Error {
	return &Error{Code: ENotEnoughStock, Message: fmt.Sprintf("only %d units are left, fewer than asked for; nothing was sold: buy fewer", left), RemainingStock: left}
}

// SalePaused is the EPaused answer: ops paused the sale; nothing was sold.
func SalePaused() *Error {
	return Errorf(EPaused, "the sale is paused by its operators; nothing was sold, try again later")
}

// NoActivity is the EActivityNotFound answer for activity id.
func NoActivity(id int64) *Error {
	return Errorf(EActivityNotFound, "no activity %d", id)
}

// NoOrder is the EOrderNotFound answer to a buyer who holds no order of
// activity activityID.
func NoOrder(activityID int64) *Error {
	return Errorf(EOrderNotFound, "you hold no order for activity %d", activityID)
}

// DatabaseDown is the EUnavailable error of a read the order database did
// not answer: nothing changed.
func DatabaseDown(err error) *Error {
	return Unavailable("the order database did not answer", err)
}

// RedisDown is the EUnavailable error of a Redis call that did not answer
// (the stock, the lock or the fence): nothing changed.
func RedisDown(err error) *Error {
	return Unavailable("Redis did not answer", err)
}

// Busy is an EBusy error: the work was refused for load, nothing changed.
func Busy(msg string, err error) *Error {
	return &Error{Code: EBusy, Message: msg, RetryAfter: RetryAfter, Err: err}
}

// ErrStockNotLoaded is the cause inside an EUnavailable error when the
// activity's stock is not in Redis (never preloaded, or Redis lost its
// data): nothing was sold, and an operator must preload or reconcile.
var ErrStockNotLoaded = errors.New("stock: not loaded")

// ErrRoomLost is the cause inside an EUnavailable error when the database
// says an activity has a waiting room and Redis has none of it (a failover
// or a flush lost it): the room fails closed, selling nothing and giving no
// place, until the books sweep, a reconcile or a stock change restores it.
var ErrRoomLost = errors.New("waiting room: lost from Redis")

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

	// Waiting room (docs/API.md "Waiting room").
	ENotAdmitted    = "not_admitted"    // a purchase without an open admission
	ENoWaitingRoom  = "no_waiting_room" // joining an activity that has none
	ENotOpen        = "not_open"        // joining before opens_at
	ENotInQueue     = "not_in_queue"    // asking for a place one does not have
	EAlreadyStarted = "already_started" // turning a room on after the start

	// Admin tasks and the buyer's cancel.
	ENotCancellable    = "order_not_cancellable" // a cancel of an order that is not created
	ERefundNotRequired = "refund_not_required"   // a refund marked done on an order that is not refund_required

	// Stopping a sale (docs/API.md "Stopping a sale").
	EPaused = "paused" // a purchase or join while ops paused the sale

	// Quantity per buyer (docs/API.md "Quantity per buyer").
	ENotEnoughStock = "not_enough_stock" // units are left, fewer than the quantity asked for
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
	// RemainingStock is set with ENotEnoughStock: the units left as the
	// service saw them.
	RemainingStock int64
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
