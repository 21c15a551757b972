// Package order stores activities and their orders in MySQL/MariaDB (or
// SQLite in the embedded mode), and is the last line of defence against
// overselling.
//
// Redis deducts stock atomically and a lock orders the writers, but either can
// be wrong for a moment: Redis can lose its data, a lock holder's lease can
// expire while it still works. So the database checks again, in the same
// transaction as the insert: a batch's orders of k units in all are
// written only if
//
//	UPDATE activities SET sold = sold + k, fence = ?
//	WHERE id = ? AND fence < ? AND sold + k <= total_stock
//
// changes the activity row (group.go claims several activities' batches in
// one such statement). `sold + k <= total_stock` refuses an oversell
// whatever Redis said; `fence < ?` refuses a writer whose lock grant (its fencing token)
// is older than one that already wrote, so a holder whose lease ran out
// cannot write behind its successor's back. Unique keys give a buyer one order
// per activity and one order per idempotency key.
//
// Schema changes live in package migrations, never in gorm's AutoMigrate.
package order

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// Errors callers branch on. With any of them nothing was written, except
// ErrCommitUnknown.
var (
	// ErrActivityNotFound: no activity has the id.
	ErrActivityNotFound = errors.New("order: activity not found")
	// ErrNotFound: no order matches.
	ErrNotFound = errors.New("order: not found")
	// ErrStaleFence: an order was written under a newer lock grant than the
	// caller's, so the caller's lease is gone.
	ErrStaleFence = errors.New("order: stale fence")
	// ErrCommitUnknown: COMMIT failed, and the order may or may not exist;
	// look it up (Written, OrderLocked) before answering.
	ErrCommitUnknown = errors.New("order: commit outcome unknown")
)

// claimFence moves the activity's fence up without claiming a unit.
const claimFence = `UPDATE activities SET fence = ? WHERE id = ? AND fence < ?`

// Orders reads and writes orders and their statuses, and writes new orders
// in groups (group.go, groupcommit.go). It is safe for concurrent use.
type Orders struct {
	conn
	// payWindow is how long a new order may stay unpaid; 0: payments are off
	// and orders get no pay_by.
	payWindow time.Duration
	// statuses is StatusCounts' snapshot.
	statuses statusSnapshot
	// handoff is the relay that takes committed created events (handoff.go),
	// set through Outbox.HandOffEvents.
	handoff *atomic.Pointer[Handoff]
}

// SetPaymentWindow turns payments on: every order written from then on gets
// pay_by = created_at + window (unless it carries a PayBy of its own). 0
// turns them off. Call it before the Store is used.
func (s *Orders) SetPaymentWindow(window time.Duration) { s.payWindow = max(window, 0) }

// CountOrders returns the number of the activity's orders that hold a unit
// (created and paid; expired and refund_required orders gave theirs back):
// the truth the Redis stock is reconciled against.
func (s *Orders) CountOrders(ctx context.Context, activityID int64) (int64, error) {
	// A causal read (causal.go): the audit and the preload decide on it.
	var n int64
	err := s.db.WithContext(ctx).Raw(s.dialect.causal("SELECT COUNT(*) FROM orders WHERE activity_id = ? AND status IN ?"),
		activityID, []string{seckill.OrderStatusCreated, seckill.OrderStatusPaid}).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("order: count orders of activity %d: %w", activityID, err)
	}
	return n, nil
}

// CountHeld returns how many of the activity's orders hold units (created
// and paid) and how many units they hold: with quantities (docs/API.md
// "Quantity per buyer") units, not orders, are what the stock is checked
// against. A causal read, as CountOrders.
func (s *Orders) CountHeld(ctx context.Context, activityID int64) (orders, units int64, err error) {
	var row struct{ Orders, Units int64 }
	err = s.db.WithContext(ctx).Raw(s.dialect.causal("SELECT COUNT(*) AS orders, COALESCE(SUM(quantity), 0) AS units FROM orders WHERE activity_id = ? AND status IN ?"),
		activityID, heldStatuses).Scan(&row).Error
	if err != nil {
		return 0, 0, fmt.Errorf("order: count the units of activity %d: %w", activityID, err)
	}
	return row.Orders, row.Units, nil
}

// OrderByUser returns the user's order for the activity, or ErrNotFound.
func (s *Orders) OrderByUser(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	var row orderRow
	err := s.db.WithContext(ctx).Where("activity_id = ? AND user_id = ?", activityID, userID).Take(&row).Error
	if err != nil {
		return seckill.Order{}, orderErr(fmt.Sprintf("of user %d in activity %d", userID, activityID), err)
	}
	return row.order(), nil
}

// HeldOrder is OrderByUser answered in the contract's words, for a buyer
// asking after their own order: seckill.NoOrder when they hold none,
// seckill.DatabaseDown when the database did not answer.
func (s *Orders) HeldOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	o, err := s.OrderByUser(ctx, activityID, userID)
	switch {
	case errors.Is(err, ErrNotFound):
		return seckill.Order{}, seckill.NoOrder(activityID)
	case err != nil:
		return seckill.Order{}, seckill.DatabaseDown(err)
	}
	return o, nil
}

// OrdersByUsers returns, of the users given, those who hold an order of the
// activity, with that order, in one query.
func (s *Orders) OrdersByUsers(ctx context.Context, activityID int64, userIDs []int64) (map[int64]seckill.Order, error) {
	got := make(map[int64]seckill.Order, len(userIDs))
	if len(userIDs) == 0 {
		return got, nil
	}
	var rows []orderRow
	if err := s.db.WithContext(ctx).Where("activity_id = ? AND user_id IN ?", activityID, userIDs).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: orders of %d users in activity %d: %w", len(userIDs), activityID, err)
	}
	for _, r := range rows {
		got[r.UserID] = r.order()
	}
	return got, nil
}

// OrderByIdempotencyKey returns the user's order created with the key, or
// ErrNotFound.
func (s *Orders) OrderByIdempotencyKey(ctx context.Context, userID int64, key string) (seckill.Order, error) {
	var row orderRow
	err := s.db.WithContext(ctx).Where("user_id = ? AND idempotency_key = ?", userID, key).Take(&row).Error
	if err != nil {
		// The key is the client's, possibly a secret of theirs: never in errors.
		return seckill.Order{}, orderErr(fmt.Sprintf("of user %d by idempotency key", userID), err)
	}
	return row.order(), nil
}

// fill gives o what CreateOrders promises for an empty ID, Status and
// CreatedAt.
func fill(o seckill.Order) (seckill.Order, error) {
	if o.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return seckill.Order{}, fmt.Errorf("order: new order id: %w", err)
		}
		o.ID = id.String()
	}
	if o.Status == "" {
		o.Status = seckill.OrderStatusCreated
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = now()
	}
	return o, nil
}

func orderErr(which string, err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("order: order %s: %w", which, ErrNotFound)
	}
	return fmt.Errorf("order: read order %s: %w", which, err)
}

// storedTime is t as the database keeps it: UTC, microseconds.
func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// optionalString is s as stored, or NULL for "".
func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// deref is *p, or the zero value for NULL.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// orderRow is a row of the orders table. (queue_claim_until is only ever
// touched by the delay queue's own statements.)
type orderRow struct {
	ID             string `gorm:"primaryKey"`
	ActivityID     int64
	UserID         int64
	Status         string
	IdempotencyKey *string // NULL when none: NULLs never collide in the unique key
	Fence          int64
	CreatedAt      time.Time
	PayBy          *time.Time // NULL while payments are off
	PaidAt         *time.Time
	StatusFence    int64
	PriceMinor     *int64  // the activity's price at the sale; NULL: none
	Currency       *string // NULL: no price
	RefundReason   *string // on refund_required and refunded orders
	// EventSequence is the sequence of the order's last event (events.go):
	// 1 when written, one more with each status change.
	EventSequence int64
	Quantity      int64 // the units the order holds
}

func (orderRow) TableName() string { return "orders" }

// newOrderRow is the row of a new order; with payments on it carries pay_by.
func (s *Orders) newOrderRow(o seckill.Order) orderRow {
	r := orderRow{
		ID:         o.ID,
		ActivityID: o.ActivityID,
		UserID:     o.UserID,
		Status:     o.Status,
		Fence:      o.Fence,
		CreatedAt:  storedTime(o.CreatedAt),
		PayBy:      optionalTime(o.PayBy),
		PaidAt:     optionalTime(o.PaidAt),
		// Its creation is its first event.
		EventSequence: 1,
		Quantity:      o.Units(),
	}
	r.PriceMinor, r.Currency = optionalPrice(o.PriceMinor, o.Currency)
	r.RefundReason = optionalString(o.RefundReason)
	if r.PayBy == nil && s.payWindow > 0 {
		r.PayBy = optionalTime(r.CreatedAt.Add(s.payWindow))
	}
	if o.IdempotencyKey != "" {
		r.IdempotencyKey = &o.IdempotencyKey
	}
	return r
}

// optionalTime is t as stored, or NULL for the zero time.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	st := storedTime(t)
	return &st
}

func (r orderRow) order() seckill.Order {
	o := seckill.Order{
		ID:           r.ID,
		ActivityID:   r.ActivityID,
		UserID:       r.UserID,
		Status:       r.Status,
		Fence:        r.Fence,
		CreatedAt:    r.CreatedAt.UTC(),
		StatusFence:  r.StatusFence,
		PriceMinor:   deref(r.PriceMinor),
		Currency:     deref(r.Currency),
		RefundReason: deref(r.RefundReason),
		Quantity:     max(r.Quantity, 1),
	}
	if r.PayBy != nil {
		o.PayBy = r.PayBy.UTC()
	}
	if r.PaidAt != nil {
		o.PaidAt = r.PaidAt.UTC()
	}
	if r.IdempotencyKey != nil {
		o.IdempotencyKey = *r.IdempotencyKey
	}
	return o
}
