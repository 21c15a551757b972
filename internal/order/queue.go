package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// The delay queue of payment verification is the orders table itself: every
// created order with a pay_by is due at its pay_by, found through the index
// on (status, pay_by). Nothing is enqueued, so nothing can be lost from the
// queue; it survives restarts of every instance because it is the data.
//
// Instances share the work by claiming due orders: a short transaction reads
// them with FOR UPDATE SKIP LOCKED (MariaDB 10.6+, MySQL 8; another
// instance's claim in progress is skipped, not waited for) and stamps
// queue_claim_until. A claim is only a hint that keeps instances off each
// other's orders: it lapses by itself when its instance dies, and the
// per-order lock and the fenced status write keep a verification correct
// without it. SQLite (the single-process embedded mode) serialises writers,
// so it needs no SKIP LOCKED.

// ClaimDue claims up to limit created orders whose pay_by is at or before now
// and that nobody has claimed, or whose claim lapsed, until now+claimFor, and
// returns them, the longest overdue first.
func (s *DelayQueue) ClaimDue(ctx context.Context, now time.Time, limit int, claimFor time.Duration) ([]seckill.Order, error) {
	now = storedTime(now)
	var rows []orderRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Where("status = ? AND pay_by <= ? AND (queue_claim_until IS NULL OR queue_claim_until <= ?)",
			seckill.OrderStatusCreated, now, now).
			Order("pay_by").Limit(limit)
		q = q.Clauses(s.dialect.skipLocked...)
		if err := q.Find(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		return tx.Model(&orderRow{}).Where("id IN ?", ids).Update("queue_claim_until", now.Add(claimFor)).Error
	})
	if err != nil {
		return nil, fmt.Errorf("order: claim due orders: %w", err)
	}
	orders := make([]seckill.Order, len(rows))
	for i, r := range rows {
		orders[i] = r.order()
	}
	return orders, nil
}

// OldestDue returns the earliest pay_by among created orders due at now, or
// the zero time when none is due: the delay queue's lag is now minus it.
func (s *DelayQueue) OldestDue(ctx context.Context, now time.Time) (time.Time, error) {
	var row orderRow
	err := s.db.WithContext(ctx).Select("pay_by").
		Where("status = ? AND pay_by <= ?", seckill.OrderStatusCreated, storedTime(now)).
		Order("pay_by").Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("order: oldest due order: %w", err)
	case row.PayBy == nil:
		return time.Time{}, nil
	}
	return row.PayBy.UTC(), nil
}
