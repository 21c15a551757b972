package order

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Handoff is how this instance's relay (internal/outbox) takes the created
// events of a group the group commit just committed, straight from memory:
// the group's transaction inserts them as one batch (eventbatch.go) leased
// to Owner, so no other relay claims them, and after COMMIT it gives them to
// Take. The relay then sends them and deletes the batch's row, one
// statement for the group, without the claim's statements (the pick, the
// lease, the read) or a mark on each event, which cost the database more
// than the events' insert itself (loadtest/RESULTS.md, order events). A
// batch not taken (Take refused it, COMMIT's outcome was unknown, the
// instance died) waits for its lease to lapse; then a relay gives its events
// back as unsent rows, claimed as any others. Only created events, an
// order's first, are handed off: an order's later events go by the claim,
// which holds them back until the earlier ones are sent.
type Handoff struct {
	Owner string        // the lease owner written on the batch
	Lease time.Duration // how long the batch stays leased to Owner
	// Take is given each committed group's batch; false: not taken. It must
	// not block.
	Take func(b EventBatch) bool
}

// EventBatch is a committed group's created events, sent as one.
type EventBatch struct {
	ID     int64
	Events []Event
}

// HandOffEvents sets (nil: removes) the relay that takes the created events of
// the groups this Store commits.
func (s *Outbox) HandOffEvents(h *Handoff) { s.handoff.Store(h) }

// batch inserts, in tx, the batch of rows leased to the handoff's owner from
// at, and makes rows its events; it returns the batch's id. Without a
// handoff the rows stay unsent, each claimed on its own.
func (h *Handoff) batch(tx *gorm.DB, d dialect, rows []eventRow, at time.Time) (int64, error) {
	if h == nil || len(rows) == 0 {
		return 0, nil
	}
	// Chosen here, so the batch and its events need no id back from the
	// database. 62 random bits do not clash in practice, and a clash would
	// fail the group's insert on the primary key, not mix two batches.
	var random [8]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read never fails (Go 1.24+)
	id := int64(binary.BigEndian.Uint64(random[:])>>1) | 1
	until := at.Add(h.Lease)
	b := batchRow{ID: id, Events: len(rows), CreatedAt: at, LeaseOwner: &h.Owner, LeaseUntil: &until, SentAt: unsent}
	if _, err := insertRows(tx, d, batchInsert, []batchRow{b}); err != nil {
		return 0, fmt.Errorf("insert the batch of %d events: %w", len(rows), err)
	}
	for i := range rows {
		rows[i].SentAt, rows[i].Batch = batched, &id
	}
	return id, nil
}

// give hands the committed batch to the relay.
func (h *Handoff) give(batch int64, rows []eventRow) {
	if h == nil || batch == 0 {
		return
	}
	events := make([]Event, len(rows))
	for i, r := range rows {
		events[i] = r.event()
	}
	h.Take(EventBatch{ID: batch, Events: events})
}
