package order

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The relay's side of the outbox (events.go writes it). A relay claims
// unsent rows with a lease, sends them, and marks them sent once the sink
// acknowledged them; a relay that dies leaves its lease to lapse, and
// another claims the rows again. Unsent rows are found by sent_at = unsent
// (or NULL: written by an instance older than that, during a rolling
// upgrade), never by id order: rows commit out of id order (the group
// commit, Galera), and a reader that moved past an id would skip a row
// committed late. A group commit's created events are a batch instead,
// sent and marked as one (eventbatch.go).

// Event is an outbox row as the relay sends it.
type Event struct {
	ID         string
	OrderID    string
	ActivityID int64
	Sequence   int64
	Type       string
	Payload    []byte // the CloudEvents envelope, JSON
	CreatedAt  time.Time
}

// isUnsent is the condition of a row not sent yet; it takes unsent.
const isUnsent = `(sent_at = ? OR sent_at IS NULL)`

// claimable picks unsent rows nobody holds a live lease on, and of each
// order only the first unsent event: its next one waits until it is sent,
// also while the first is in a batch not sent yet (eventbatch.go), so one
// order's events leave in sequence order whoever relays them.
const claimable = `SELECT id FROM order_events e WHERE ` + isUnsent + ` AND (lease_until IS NULL OR lease_until < ?)
AND NOT EXISTS (SELECT 1 FROM order_events p WHERE p.aggregateid = e.aggregateid AND p.sequence < e.sequence
AND (p.sent_at = ? OR p.sent_at IS NULL OR ` + inUnsentBatch + `))
ORDER BY created_at LIMIT ?`

// takeLease leases the picked rows to one claim; its guard repeats the
// pick's, so of two relays racing for a row one wins. %s is the index hint
// (byID).
const takeLease = `UPDATE order_events%s SET lease_owner = ?, lease_until = ?
WHERE id IN ? AND ` + isUnsent + ` AND (lease_until IS NULL OR lease_until < ?)`

// releaseLease gives up a claim's lease on rows it did not get sent.
const releaseLease = `UPDATE order_events%s SET lease_owner = NULL, lease_until = NULL
WHERE id IN ? AND lease_owner = ? AND ` + isUnsent

// markSent marks rows the sink acknowledged.
const markSent = `UPDATE order_events%s SET sent_at = ? WHERE id IN ? AND ` + isUnsent

// byID keeps the statements on rows named by id to primary-key look-ups.
// Left to itself, MariaDB takes the index (sent_at, created_at) for "id IN
// (...) AND sent_at = unsent" (the unsent rows look few): a locking range
// scan over the unsent rows, which are where every group commit inserts its
// events. Seen in loadtest/bench.sh: group commits deadlocked
// on their events' insert (buyers told 503), and a mark found none of the
// rows of a group committed a moment before, which then waited out their
// 30-s lease unsent.
func (s *Outbox) byID() string { return s.dialect.primaryKeyOnly }

// ClaimEvents leases up to limit sendable events to claim (a token unique to
// this claim) until now+lease and returns them, oldest first; first it gives
// back the batches whose lease lapsed. No row is locked beyond the
// statements themselves, so a claim never holds up the transactions that
// insert events.
func (s *Outbox) ClaimEvents(ctx context.Context, claim string, now time.Time, lease time.Duration, limit int) ([]Event, error) {
	now = storedTime(now)
	if err := s.giveBackLapsed(ctx, now, limit); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	var ids []string
	if err := db.Raw(claimable, unsent, now, unsent, batched, unsent, limit).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("order: pick events to send: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	res := db.Exec(fmt.Sprintf(takeLease, s.byID()), claim, now.Add(lease), ids, unsent, now)
	if res.Error != nil {
		return nil, fmt.Errorf("order: lease %d events: %w", len(ids), res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, nil
	}
	var rows []eventRow
	if err := db.Table("order_events"+s.byID()).Where("id IN ? AND lease_owner = ? AND "+isUnsent, ids, claim, unsent).Order("created_at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: read the events leased: %w", err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

// ReleaseEvents gives up claim's lease on the rows ids it did not get sent, so
// that the next attempt, by any relay, need not wait for it to lapse.
func (s *Outbox) ReleaseEvents(ctx context.Context, claim string, ids []string) error {
	db := s.db.WithContext(ctx)
	err := db.Exec(fmt.Sprintf(releaseLease, s.byID()), ids, claim, unsent).Error
	if err != nil {
		return fmt.Errorf("order: release the events of claim %s: %w", claim, err)
	}
	return nil
}

// MarkEventsSent records that the sink acknowledged the events.
func (s *Outbox) MarkEventsSent(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	db := s.db.WithContext(ctx)
	err := db.Exec(fmt.Sprintf(markSent, s.byID()), storedTime(at), ids, unsent).Error
	if err != nil {
		return fmt.Errorf("order: mark %d events sent: %w", len(ids), err)
	}
	return nil
}

// DeleteEvents deletes events sent before before, and with unrelayed (events
// are not relayed: a shop reads them by change data capture) those written
// before it; it deletes at least limit when there are as many, a sent
// batch's events all at once, and returns how many it deleted.
func (s *Outbox) DeleteEvents(ctx context.Context, before time.Time, unrelayed bool, limit int) (int64, error) {
	db := s.db.WithContext(ctx)
	before = storedTime(before)
	q := db.Model(&eventRow{}).Where("sent_at > ? AND sent_at < ?", batched, before)
	if unrelayed {
		q = db.Model(&eventRow{}).Where("created_at < ?", before)
	}
	var ids []string
	if err := q.Limit(limit).Pluck("id", &ids).Error; err != nil {
		return 0, fmt.Errorf("order: find old events: %w", err)
	}
	n, err := deleteEventsByID(db, ids)
	if err != nil || n >= int64(limit) {
		return n, err
	}
	m, err := s.deleteSentBatches(ctx, before, unrelayed, limit-int(n))
	return n + m, err
}

func deleteEventsByID(db *gorm.DB, ids []string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res := db.Where("id IN ?", ids).Delete(&eventRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("order: delete %d old events: %w", len(ids), res.Error)
	}
	return res.RowsAffected, nil
}

// PendingEvents returns how many events no sink has acknowledged yet, and
// when the oldest of them was written (zero when none).
func (s *Outbox) PendingEvents(ctx context.Context) (n int64, oldest time.Time, err error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err = s.db.WithContext(ctx).Raw("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM order_events WHERE "+isUnsent, unsent).Scan(&row).Error
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("order: count pending events: %w", err)
	}
	if row.Oldest != nil {
		oldest = row.Oldest.UTC()
	}
	inBatches, oldestBatch, err := s.pendingBatches(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	if inBatches > 0 && (oldest.IsZero() || oldestBatch.Before(oldest)) {
		oldest = oldestBatch
	}
	return row.N + inBatches, oldest, nil
}

// PendingEventsOf returns how many of the activity's events no sink has
// acknowledged yet.
func (s *Outbox) PendingEventsOf(ctx context.Context, activityID int64) (int64, error) {
	var n, inBatches int64
	// Through the unsent rows' index: they are few, and an index on the
	// activity would cost every purchase's transaction a write per event.
	db := s.db.WithContext(ctx)
	err := db.Model(&eventRow{}).Where(isUnsent+" AND activity_id = ?", unsent, activityID).Count(&n).Error
	if err == nil {
		err = db.Raw("SELECT COUNT(*) FROM order_events p WHERE "+inUnsentBatch+" AND p.activity_id = ?", batched, unsent, activityID).Scan(&inBatches).Error
	}
	if err != nil {
		return 0, fmt.Errorf("order: count pending events of activity %d: %w", activityID, err)
	}
	return n + inBatches, nil
}

// EventsOf returns the outbox rows of the activity's orders, by order and
// sequence: the record of every committed change that sent rows' retention
// has not deleted yet.
func (s *Outbox) EventsOf(ctx context.Context, activityID int64) ([]Event, error) {
	var rows []eventRow
	if err := s.db.WithContext(ctx).Where("activity_id = ?", activityID).Order("aggregateid, sequence").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: events of activity %d: %w", activityID, err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

func (r eventRow) event() Event {
	return Event{ID: r.ID, OrderID: r.Aggregateid, ActivityID: r.ActivityID, Sequence: r.Sequence,
		Type: r.Type, Payload: []byte(r.Payload), CreatedAt: r.CreatedAt.UTC()}
}
