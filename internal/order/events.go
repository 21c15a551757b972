package order

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/jsonappend"
)

// The transactional outbox (docs/DESIGN.md "Order events"): each order's
// creation and each change of its status inserts one row of order_events in
// the transaction that makes the change, so the event commits exactly when
// the change does, also when COMMIT's outcome is unknown. The row's payload
// is the whole CloudEvents envelope, so the relay and a shop's Debezium send
// the same bytes. outbox.go is the relay's side of the table.

// eventRow is a row of order_events. Its first five columns are the ones
// Debezium's outbox event router reads.
type eventRow struct {
	ID            string `gorm:"primaryKey"`
	Aggregatetype string
	Aggregateid   string
	Type          string
	Payload       string
	Sequence      int64
	ActivityID    int64
	CreatedAt     time.Time
	LeaseOwner    *string
	LeaseUntil    *time.Time
	SentAt        time.Time // unsent until the sink acknowledged it
	Batch         *int64    // the group's batch (eventbatch.go) when batched
}

// unsent is sent_at of an event no sink has acknowledged: a time, not NULL,
// so that marking a row sent overwrites eight bytes in place; from NULL the
// row grows, and MariaDB rewrites the whole of it, payload and all, in the
// table and the redo log (twice the database's CPU for the mark, measured:
// docs/DESIGN.md "Order events").
var unsent = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

func (eventRow) TableName() string { return "order_events" }

// eventAggregate is every event's aggregatetype: Debezium routes on it.
const eventAggregate = "order"

// eventNamespace names the hash of an event's order and sequence in its id.
var eventNamespace = uuid.MustParse("5b0c6a0e-5f5e-4c1e-9f5a-6f7264657273")

// EventID is the id of the order's sequence-th event, committed at at: a
// UUIDv7 whose 48-bit time is at's milliseconds and whose next 12 bits are
// at's fraction of a millisecond (RFC 9562's "increased clock precision"),
// the rest a hash of the order and the sequence, so one event has one id
// wherever it is computed. The time comes first because the id is the
// outbox's primary key, InnoDB's clustered index: ids that rise append to
// its last page. A hash alone (a UUIDv5, as before) sends every row to a
// random page of a growing table; ids in time order but shuffled within
// one time (one batch) split each last page in the middle and leave its
// left half empty for good. So a batch's rows are inserted in id order
// (insertCreatedEvents); BenchmarkOutboxInsert measures the three.
func EventID(orderID string, sequence int64, at time.Time) string {
	id := uuid.NewSHA1(eventNamespace, []byte(orderID+"/"+strconv.FormatInt(sequence, 10)))
	// 48 bits of milliseconds, then the version and 12 bits of fraction.
	clock := uint64(at.UnixMilli())<<16 | 0x7000 | uint64(at.Nanosecond()%1e6*4096/1e6) //nolint:gosec // G115: a time after 1970 and a fraction under 4096
	binary.BigEndian.PutUint64(id[:8], clock)
	return id.String() // the variant bits are the hash's, RFC 4122's already
}

// newEventRow is the outbox row of o's sequence-th event, o as it is after
// the change, committed at at.
func newEventRow(o seckill.Order, sequence int64, at time.Time) eventRow {
	id := EventID(o.ID, sequence, at)
	payload := jsonappend.OrderEvent(make([]byte, 0, 512), seckill.NewOrderEvent(id, o, sequence, at))
	return eventRow{
		ID: id, Aggregatetype: eventAggregate, Aggregateid: o.ID, Type: seckill.OrderEventType(o.Status),
		Payload: string(payload), Sequence: sequence, ActivityID: o.ActivityID, CreatedAt: storedTime(at),
		SentAt: unsent,
	}
}

// insertCreatedEvents inserts the events of orders just written (sequence 1) in one
// multi-row statement of tx, the group's transaction, as one batch leased to
// the handoff's relay when there is one (eventbatch.go), and returns their
// rows and the batch's id (0: none).
func insertCreatedEvents(tx *gorm.DB, d dialect, orders []seckill.Order, h *Handoff) ([]eventRow, int64, error) {
	rows := make([]eventRow, len(orders))
	for i, o := range orders {
		rows[i] = newEventRow(o, 1, o.CreatedAt)
	}
	// One time for the whole batch: in id order, the rows append (EventID).
	slices.SortFunc(rows, func(a, b eventRow) int { return strings.Compare(a.ID, b.ID) })
	batch, err := h.batch(tx, d, rows, storedTime(time.Now()))
	if err != nil {
		return nil, 0, err
	}
	if _, err := insertRows(tx, d, eventInsert, rows); err != nil {
		return nil, 0, fmt.Errorf("insert the events of %d orders: %w", len(rows), err)
	}
	return rows, batch, nil
}

// insertChangeEvent reads the order id back in tx, after the change that
// moved its event_sequence on, and inserts the event of that change.
func insertChangeEvent(tx *gorm.DB, d dialect, orderID string) (orderRow, error) {
	var row orderRow
	res := tx.Raw("SELECT * FROM orders WHERE id = ?", orderID).Scan(&row)
	switch {
	case res.Error != nil:
		return orderRow{}, fmt.Errorf("read the changed order back: %w", res.Error)
	case res.RowsAffected == 0:
		return orderRow{}, fmt.Errorf("read the changed order back: %w", ErrNotFound)
	}
	ev := newEventRow(row.order(), row.EventSequence, now())
	if _, err := insertRows(tx, d, eventInsert, []eventRow{ev}); err != nil {
		return orderRow{}, fmt.Errorf("insert event %d of order %s: %w", row.EventSequence, orderID, err)
	}
	return row, nil
}
