package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// The admin tasks' reads and writes (docs/API.md "Admin tasks"): listing
// activities and orders a page at a time, marking a refund done, and
// changing an activity's total stock under its fence.

var (
	// ErrBelowSold: a new total stock would be below the units already sold.
	ErrBelowSold = errors.New("order: total stock below the units sold")
	// ErrNotRefundRequired: the order is not refund_required (already
	// refunded, or never paid late).
	ErrNotRefundRequired = errors.New("order: order is not refund_required")
)

// ActivityStock is an activity with its sold count as the database keeps it.
type ActivityStock struct {
	seckill.Activity
	Sold int64
}

// ListActivities returns up to limit activities with ids above afterID, by id.
func (s *Activities) ListActivities(ctx context.Context, afterID int64, limit int) ([]ActivityStock, error) {
	var rows []activityRow
	err := s.db.WithContext(ctx).Where("id > ?", afterID).Order("id").Limit(pageSize(limit)).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("order: list activities: %w", err)
	}
	out := make([]ActivityStock, len(rows))
	for i, r := range rows {
		out[i] = ActivityStock{Activity: r.activity(), Sold: r.Sold}
	}
	return out, nil
}

type adminOrderRow struct {
	Row        orderRow `gorm:"embedded"`
	RefundedBy *string
	RefundedAt *time.Time
}

func (adminOrderRow) TableName() string { return "orders" }

func (r adminOrderRow) adminOrder() seckill.AdminOrder {
	o := seckill.AdminOrder{Order: r.Row.order()}
	if r.RefundedBy != nil {
		o.RefundedBy = *r.RefundedBy
	}
	if r.RefundedAt != nil {
		o.RefundedAt = r.RefundedAt.UTC()
	}
	return o
}

// ListOrders returns up to limit of the activity's orders in status (all
// statuses when empty) with ids above afterID, by id. Order ids are UUIDv7,
// so this is also roughly the order they were created in.
func (s *Orders) ListOrders(ctx context.Context, activityID int64, status, afterID string, limit int) ([]seckill.AdminOrder, error) {
	q := s.db.WithContext(ctx).Where("activity_id = ? AND id > ?", activityID, afterID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	var rows []adminOrderRow
	if err := q.Order("id").Limit(pageSize(limit)).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: list orders of activity %d: %w", activityID, err)
	}
	out := make([]seckill.AdminOrder, len(rows))
	for i, r := range rows {
		out[i] = r.adminOrder()
	}
	return out, nil
}

// AdminOrderByID is OrderByID with the refund's details.
func (s *Orders) AdminOrderByID(ctx context.Context, id string) (seckill.AdminOrder, error) {
	var row adminOrderRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return seckill.AdminOrder{}, orderErr(id, err)
	}
	return row.adminOrder(), nil
}

// markRefunded changes refund_required to refunded, once: the status guard
// makes a second call (or a racing one) change nothing.
const markRefunded = `UPDATE orders SET status = ?, refunded_by = ?, refunded_at = ?, event_sequence = event_sequence + 1
WHERE id = ? AND status = ?`

// MarkRefunded records that the order's refund was made by who at at:
// refund_required becomes refunded, with its event in the same transaction.
// ErrNotFound, or ErrNotRefundRequired (with the order as it is) when its
// status is another.
func (s *Orders) MarkRefunded(ctx context.Context, orderID, who string, at time.Time) (seckill.AdminOrder, error) {
	var changed bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(markRefunded, seckill.OrderStatusRefunded, who, storedTime(at), orderID, seckill.OrderStatusRefundRequired)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		changed = true
		_, err := insertChangeEvent(tx, s.dialect, orderID)
		return err
	})
	if err != nil {
		return seckill.AdminOrder{}, fmt.Errorf("order: mark order %s refunded: %w", orderID, err)
	}
	o, err := s.AdminOrderByID(ctx, orderID)
	if err != nil {
		return seckill.AdminOrder{}, err
	}
	if !changed {
		return o, fmt.Errorf("order: mark order %s refunded: %w (%s)", orderID, ErrNotRefundRequired, o.Status)
	}
	return o, nil
}

// setTotalStock changes the total only under the fence the caller claimed
// (no grant came after it) and never below what is sold.
const setTotalStock = `UPDATE activities SET total_stock = ? WHERE id = ? AND fence = ? AND sold <= ?`

// SetTotalStock sets the activity's total stock to total, under fence, the
// grant the caller claimed with ClaimFence and still holds: a purchase under
// an older grant cannot write past it, and a newer grant makes it refuse
// (ErrStaleFence). It refuses a total below the units sold (ErrBelowSold)
// and returns the units sold, read in the same transaction.
func (s *Activities) SetTotalStock(ctx context.Context, activityID, fence, total int64) (sold int64, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(setTotalStock, total, activityID, fence, total)
		if res.Error != nil {
			return fmt.Errorf("order: set total stock of activity %d: %w", activityID, res.Error)
		}
		var a activityRow
		if err := tx.Clauses(s.dialect.locking...).Select("fence", "sold", "total_stock").Take(&a, activityID).Error; err != nil {
			return activityErr(activityID, err)
		}
		sold = a.Sold
		if res.RowsAffected == 1 || (a.TotalStock == total && a.Fence == fence && a.Sold <= total) {
			return nil // changed, or already that total (MySQL counts an unchanged row as not affected)
		}
		if a.Fence != fence {
			return fmt.Errorf("order: set total stock of activity %d under fence %d, claimed by %d: %w", activityID, fence, a.Fence, ErrStaleFence)
		}
		return fmt.Errorf("order: total stock %d of activity %d, %d sold: %w", total, activityID, a.Sold, ErrBelowSold)
	})
	return sold, err
}

func pageSize(limit int) int {
	if limit < 1 || limit > seckill.MaxPage {
		return seckill.MaxPage
	}
	return limit
}
