package order

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Event batches (migration 00012): a group commit's created events are one
// batch, a row of order_event_batches written in the group's transaction,
// and the events say sent_at = batched and their batch's id. The relay that
// sent a batch marks its row sent: one small row a group, where a mark on
// each event cost MariaDB more than the event's insert. So an event is
// unsent while sent_at = unsent (or NULL), or while it is batched and its
// batch's sent_at is unsent. A batch whose lease lapsed, or whose send
// failed, is given back: its row goes, and its events become unsent rows,
// claimed one by one as any others. The retention deletes a sent batch's
// events with its row.

// batched is sent_at of an event written with its group's batch: sent once
// the batch is.
var batched = unsent.Add(time.Second)

// batchRow is a row of order_event_batches.
type batchRow struct {
	ID         int64 `gorm:"primaryKey;autoIncrement:false"`
	Events     int
	CreatedAt  time.Time
	LeaseOwner *string
	LeaseUntil *time.Time
	SentAt     time.Time // unsent until the sink acknowledged its events
}

func (batchRow) TableName() string { return "order_event_batches" }

// inUnsentBatch is the condition of a batched event of the table aliased p
// whose batch is not sent yet; it takes batched and unsent.
const inUnsentBatch = `(p.sent_at = ? AND EXISTS (SELECT 1 FROM order_event_batches b WHERE b.id = p.batch AND b.sent_at = ?))`

// MarkBatchesSent records that the sink acknowledged the batches' events.
func (s *Outbox) MarkBatchesSent(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	db := s.db.WithContext(ctx)
	if err := db.Exec(fmt.Sprintf(markBatchesSent, s.byID()), storedTime(at), ids, unsent).Error; err != nil {
		return fmt.Errorf("order: mark %d event batches sent: %w", len(ids), err)
	}
	return nil
}

// markBatchesSent marks batches sent; %s is the index hint (byID): the
// batches' own unsent index is where group commits insert.
const markBatchesSent = `UPDATE order_event_batches%s SET sent_at = ? WHERE id IN ? AND sent_at = ?`

// ReleaseBatches gives back the events of owner's batches ids, not sent, as
// unsent rows, so that any relay claims them at once rather than after the
// lease.
func (s *Outbox) ReleaseBatches(ctx context.Context, owner string, ids []int64) error {
	for _, id := range ids {
		if err := s.giveBack(ctx, id, "lease_owner = ?", owner); err != nil {
			return err
		}
	}
	return nil
}

// giveBackLapsed gives back the events of up to limit batches whose lease
// ended before now: their relay died, or did not get them sent in time.
func (s *Outbox) giveBackLapsed(ctx context.Context, now time.Time, limit int) error {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&batchRow{}).Where("sent_at = ? AND (lease_until IS NULL OR lease_until < ?)", unsent, now).
		Order("created_at").Limit(limit).Pluck("id", &ids).Error
	if err != nil {
		return fmt.Errorf("order: find event batches whose lease lapsed: %w", err)
	}
	for _, id := range ids {
		if err := s.giveBack(ctx, id, "lease_until IS NULL OR lease_until < ?", now); err != nil {
			return err
		}
	}
	return nil
}

// giveBack deletes batch id, when guard (on its row) holds, and makes its
// events unsent rows, in one transaction: the batch is either still a batch
// or all its events are claimable.
func (s *Outbox) giveBack(ctx context.Context, id int64, guard string, args ...any) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("id = ? AND sent_at = ? AND ("+guard+")", append([]any{id, unsent}, args...)...).Delete(&batchRow{})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // sent meanwhile, or given back by another relay
		}
		// The events by id, on the primary key, not by a locking range over
		// the unsent rows' index, where group commits insert (byID).
		var events []string
		if err := tx.Model(&eventRow{}).Where("sent_at = ? AND batch = ?", batched, id).Pluck("id", &events).Error; err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		return tx.Exec(fmt.Sprintf(unbatch, s.byID()), unsent, events, batched, id).Error
	})
	if err != nil {
		return fmt.Errorf("order: give back the events of batch %d: %w", id, err)
	}
	return nil
}

// unbatch makes a batch's events unsent rows; %s is the index hint (byID).
const unbatch = `UPDATE order_events%s SET sent_at = ?, batch = NULL WHERE id IN ? AND sent_at = ? AND batch = ?`

// pendingBatches returns how many events the batches not sent yet hold,
// and when the oldest of them was written (zero when none).
func (s *Outbox) pendingBatches(ctx context.Context) (n int64, oldest time.Time, err error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err = s.db.WithContext(ctx).Raw("SELECT COALESCE(SUM(events), 0) AS n, MIN(created_at) AS oldest FROM order_event_batches WHERE sent_at = ?", unsent).Scan(&row).Error
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("order: count the events of pending batches: %w", err)
	}
	if row.Oldest != nil {
		oldest = row.Oldest.UTC()
	}
	return row.N, oldest, nil
}

// deleteSentBatches deletes the batches sent before before (with unrelayed,
// written before it) and their events, until it deleted at least limit
// events or found no more, and returns how many events it deleted.
func (s *Outbox) deleteSentBatches(ctx context.Context, before time.Time, unrelayed bool, limit int) (int64, error) {
	db := s.db.WithContext(ctx)
	q := db.Model(&batchRow{}).Where("sent_at > ? AND sent_at < ?", unsent, before)
	if unrelayed {
		q = db.Model(&batchRow{}).Where("created_at < ?", before)
	}
	var batches []int64
	if err := q.Limit(max(limit, 1)).Pluck("id", &batches).Error; err != nil {
		return 0, fmt.Errorf("order: find old event batches: %w", err)
	}
	var deleted int64
	for len(batches) > 0 && deleted < int64(limit) {
		some := batches[:min(len(batches), 100)]
		batches = batches[len(some):]
		var ids []string
		if err := db.Model(&eventRow{}).Where("sent_at = ? AND batch IN ?", batched, some).Pluck("id", &ids).Error; err != nil {
			return deleted, fmt.Errorf("order: find the events of %d old batches: %w", len(some), err)
		}
		n, err := deleteEventsByID(db, ids)
		deleted += n
		if err != nil {
			return deleted, err
		}
		if err := db.Where("id IN ?", some).Delete(&batchRow{}).Error; err != nil {
			return deleted, fmt.Errorf("order: delete %d old event batches: %w", len(some), err)
		}
	}
	return deleted, nil
}
