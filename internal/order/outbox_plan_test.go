package order

import (
	"fmt"
	"testing"
	"time"
)

// The relay's statements on rows named by id run on the primary key, also
// when the table's statistics say the unsent rows are few: a locking range
// scan of the unsent rows' index is what deadlocked group commits on their
// events' insert and let a mark miss a group committed a moment before.
// The same holds for the batches' mark, on the batches' own unsent index.
// Can fail: with byID returning "", MariaDB plans each of them on
// ix_order_events_unsent (the batches' mark on ix_order_event_batches_unsent).
func TestOutboxStatementsByIDUseThePrimaryKey(t *testing.T) {
	s, _ := openMariaDB(t)
	a := newActivity(t, s, 10)
	// A sale's worth of sent rows, counted by the statistics; then a burst
	// of unsent ones the statistics do not count yet, as in a sale.
	fake := `INSERT INTO order_events (id, aggregatetype, aggregateid, type, payload, sequence, activity_id, created_at, sent_at)
SELECT UUID(), 'order', UUID(), 'seckill.order.created', REPEAT('x', 600), 1, ?, NOW(6), ? FROM seq_1_to_%d`
	if err := s.db.Exec(fmt.Sprintf(fake, 3000), a.ID, time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("ANALYZE TABLE order_events").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec(fmt.Sprintf(fake, 200), a.ID, unsent).Error; err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := s.db.Raw("SELECT id FROM order_events WHERE sent_at = ?", unsent).Scan(&ids).Error; err != nil || len(ids) < 200 {
		t.Fatalf("unsent rows: %d, %v", len(ids), err)
	}
	batches := fakeBatches(t, s)
	now := time.Now()
	for name, q := range map[string][]any{
		"takeLease":       {fmt.Sprintf(takeLease, s.Outbox.byID()), "c", now, ids, unsent, now},
		"releaseLease":    {fmt.Sprintf(releaseLease, s.Outbox.byID()), ids, "c", unsent},
		"markSent":        {fmt.Sprintf(markSent, s.Outbox.byID()), now, ids, unsent},
		"unbatch":         {fmt.Sprintf(unbatch, s.Outbox.byID()), unsent, ids, batched, 7},
		"markBatchesSent": {fmt.Sprintf(markBatchesSent, s.Outbox.byID()), now, batches, unsent},
	} {
		var plan []struct {
			Key *string
		}
		if err := s.db.Raw("EXPLAIN "+q[0].(string), q[1:]...).Scan(&plan).Error; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(plan) != 1 || plan[0].Key == nil || *plan[0].Key != "PRIMARY" {
			key := "none"
			if len(plan) == 1 && plan[0].Key != nil {
				key = *plan[0].Key
			}
			t.Errorf("%s runs on %s, want PRIMARY", name, key)
		}
	}
}

// fakeBatches fills order_event_batches as a sale does, sent batches counted
// by the statistics and a burst of unsent ones, and returns the unsent ids.
func fakeBatches(t *testing.T, s *Store) []int64 {
	t.Helper()
	fake := `INSERT INTO order_event_batches (id, events, created_at, sent_at)
SELECT seq + ?, 20, NOW(6), ? FROM seq_1_to_%d`
	if err := s.db.Exec(fmt.Sprintf(fake, 3000), 0, time.Now()).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("ANALYZE TABLE order_event_batches").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec(fmt.Sprintf(fake, 200), 10000, unsent).Error; err != nil {
		t.Fatal(err)
	}
	var ids []int64
	if err := s.db.Raw("SELECT id FROM order_event_batches WHERE sent_at = ?", unsent).Scan(&ids).Error; err != nil || len(ids) < 200 {
		t.Fatalf("unsent batches: %d, %v", len(ids), err)
	}
	return ids
}
