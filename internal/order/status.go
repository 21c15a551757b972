package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// ErrStatusChanged: the order's status is no longer the one a status change
// starts from; another verification changed it first.
var ErrStatusChanged = errors.New("order: status changed since it was read")

// StatusChange moves one order from one status to another under a grant of
// the order's own lock (its fence).
type StatusChange struct {
	OrderID    string
	ActivityID int64
	From, To   string
	// PaidAt is the provider's time of payment, stored with To paid or
	// refund_required.
	PaidAt time.Time
	// RefundReason is why, stored with To refund_required (a
	// seckill.RefundReason value).
	RefundReason string
	// Fence of the per-order lock grant the change is made under.
	Fence int64
}

// changeStatus writes the new status only if the order still has the old
// one and no grant as new as this one changed it before: a verification
// whose lease ran out cannot write behind its successor's back, and a status
// changes at most once from each value.
const changeStatus = `UPDATE orders SET status = ?, paid_at = ?, refund_reason = ?, status_fence = ?, queue_claim_until = NULL,
event_sequence = event_sequence + 1 WHERE id = ? AND activity_id = ? AND status = ? AND status_fence < ?`

// giveUnitsBack takes the units of an order that stops holding them
// (expired, or refund_required straight from created) off the activity's
// sold count: all of its quantity, in the transaction of the change, so
// exactly once.
const giveUnitsBack = `UPDATE activities SET sold = sold - (SELECT quantity FROM orders WHERE id = ?)
WHERE id = ? AND sold >= (SELECT quantity FROM orders WHERE id = ?)`

// allowedChanges are the only status changes there are.
var allowedChanges = map[[2]string]bool{
	{seckill.OrderStatusCreated, seckill.OrderStatusPaid}:           true,
	{seckill.OrderStatusCreated, seckill.OrderStatusExpired}:        true,
	{seckill.OrderStatusCreated, seckill.OrderStatusRefundRequired}: true, // a payment that does not match
	{seckill.OrderStatusExpired, seckill.OrderStatusRefundRequired}: true,
}

// ChangeStatus applies c in one transaction; created -> expired and created
// -> refund_required also take the unit off the activity's sold count in the
// same transaction, so the database never counts the unit of an order that
// holds none as sold nor loses it.
//
// Errors: ErrNotFound, ErrStatusChanged (the order's status is not c.From),
// ErrStaleFence (a grant as new as c.Fence changed the status already); with
// these or any other error nothing was written, except ErrCommitUnknown:
// COMMIT failed and the change may have landed (read the order back).
func (s *Orders) ChangeStatus(ctx context.Context, c StatusChange) error {
	if !allowedChanges[[2]string{c.From, c.To}] {
		return fmt.Errorf("order: no status change from %q to %q", c.From, c.To)
	}
	err := transaction(s.db.WithContext(ctx), s.dialect, func(tx *gorm.DB) (bool, error) {
		return true, s.changeStatus(tx, c)
	})
	if err != nil {
		return fmt.Errorf("order: %s of order %s: %w", c.To, c.OrderID, err)
	}
	return nil
}

// changeStatus is ChangeStatus's work in its transaction.
func (s *Orders) changeStatus(tx *gorm.DB, c StatusChange) error {
	expiry := c.From == seckill.OrderStatusCreated && !seckill.KeepsUnit(c.To)
	if expiry {
		// The activity's row before the order's, in the order a purchase
		// batch takes them (its claim, then its insert, whose unique-key check
		// locks a held order): the other way round, an expiry and a batch
		// with the same buyer deadlock.
		if err := tx.Clauses(s.dialect.locking...).Select("id").Take(&activityRow{}, c.ActivityID).Error; err != nil {
			return activityErr(c.ActivityID, err)
		}
	}
	res := tx.Exec(changeStatus, c.To, optionalTime(c.PaidAt), optionalString(c.RefundReason), c.Fence, c.OrderID, c.ActivityID, c.From, c.Fence)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return whyNoChange(tx, c)
	}
	if expiry {
		res := tx.Exec(giveUnitsBack, c.OrderID, c.ActivityID, c.OrderID)
		if res.Error != nil {
			return fmt.Errorf("give the units back: %w", res.Error)
		}
		if res.RowsAffected != 1 {
			// The order held its units, so sold was at least its quantity:
			// something else is wrong; change nothing rather than lose count.
			return fmt.Errorf("activity %d has fewer units sold than the order holds", c.ActivityID)
		}
	}
	// The change's event, in its transaction (events.go).
	_, err := insertChangeEvent(tx, s.dialect, c.OrderID)
	return err
}

// whyNoChange explains why changeStatus changed no row.
func whyNoChange(tx *gorm.DB, c StatusChange) error {
	var row orderRow
	err := tx.Select("status", "status_fence").Where("id = ? AND activity_id = ?", c.OrderID, c.ActivityID).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("read order after a refused change: %w", err)
	case row.StatusFence >= c.Fence:
		return fmt.Errorf("%w: fence %d, status written under %d", ErrStaleFence, c.Fence, row.StatusFence)
	case row.Status != c.From:
		return fmt.Errorf("%w: %s, not %s", ErrStatusChanged, row.Status, c.From)
	default:
		return errors.New("change refused, but the order has the status and an older fence")
	}
}

// OrderByID returns the order with the id, or ErrNotFound.
// It is a causal read (causal.go): the payment verification decides on it.
func (s *Orders) OrderByID(ctx context.Context, id string) (seckill.Order, error) {
	var row orderRow
	res := s.db.WithContext(ctx).Raw(s.dialect.causal("SELECT * FROM orders WHERE id = ?"), id).Scan(&row)
	switch {
	case res.Error != nil:
		return seckill.Order{}, orderErr(id, res.Error)
	case res.RowsAffected == 0:
		return seckill.Order{}, orderErr(id, gorm.ErrRecordNotFound)
	}
	return row.order(), nil
}

// OrderLocked returns the order with a locking read, for the decision after
// a status change whose COMMIT had an unknown outcome: it locks the
// activity's row, which an expiry's transaction holds from its start, and
// then the order's, which every status change holds, so a COMMIT still in
// flight is waited for (until ctx ends) instead of missed by a plain read.
// On Galera it also writes the order's row (fenceOut), which every status
// change writes, so that a change in flight on another node cannot land
// after it.
func (s *Orders) OrderLocked(ctx context.Context, activityID int64, id string) (seckill.Order, error) {
	var row orderRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockActivity(tx, s.dialect, activityID, "id", &activityRow{}); err != nil {
			return err
		}
		if err := tx.Clauses(s.dialect.locking...).Where("id = ? AND activity_id = ?", id, activityID).Take(&row).Error; err != nil {
			return orderErr(id, err)
		}
		return fenceOut(tx, s.dialect, "orders", "status_fence", id)
	})
	if err != nil {
		return seckill.Order{}, err
	}
	return row.order(), nil
}

// CountByStatus returns how many orders of the activity are in each status
// (statuses without orders are absent); activityID 0 counts all activities.
func (s *Orders) CountByStatus(ctx context.Context, activityID int64) (map[string]int64, error) {
	var rows []struct {
		Status string
		N      int64
	}
	q := s.db.WithContext(ctx).Model(&orderRow{}).Select("status, COUNT(*) AS n").Group("status")
	if activityID != 0 {
		q = q.Where("activity_id = ?", activityID)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: count orders by status: %w", err)
	}
	counts := make(map[string]int64, len(rows))
	for _, r := range rows {
		counts[r.Status] = r.N
	}
	return counts, nil
}
