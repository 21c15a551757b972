package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
)

// eventsEvery is how often the events watch reads the stream.
const eventsEvery = time.Second

// eventWatch reads the order events' Redis stream (docs/API.md "Order
// events"; the instances' default sink, `<key prefix>events`) all through
// the campaign and once more at the end, as a consumer would: every event
// it can, deduplicated by its id. It reads on from the last entry it read;
// when the stream's last id falls behind that entry (a failover lost the
// newest entries, and the new primary hands out ids again below it), it
// reads the stream again from its start, so no entry written after a
// failover is skipped.
type eventWatch struct {
	rdb    redis.UniversalClient
	stream string
	cursor string // the last entry read ("0": none)
	events map[string]streamEvent
	// orders are each order's event ids in the order first read.
	orders  map[string][]string
	entries int // entries read, redeliveries and rereads included
	rewinds int
	reads   int
	broken  []string // entries that are no CloudEvents envelope
}

// streamEvent is an event as first read.
type streamEvent struct {
	order    string
	sequence int64
	typ      string
	entry    string
}

func newEventWatch(rdb redis.UniversalClient, stream string) *eventWatch {
	return &eventWatch{rdb: rdb, stream: stream, cursor: "0", events: map[string]streamEvent{}, orders: map[string][]string{}}
}

// read reads the entries added since the last read. A read that fails
// (Redis paused, failing over) is skipped: the next one reads on.
func (ew *eventWatch) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := ew.rdb.XInfoStream(rctx, ew.stream).Result()
	switch {
	case err != nil && strings.Contains(err.Error(), "no such key"):
		ew.cursor = "0" // no event yet, or a failover lost them all
		ew.reads++
		return
	case err != nil:
		return
	case entryBefore(info.LastGeneratedID, ew.cursor):
		ew.cursor = "0"
		ew.rewinds++
	}
	for {
		start := "(" + ew.cursor
		if ew.cursor == "0" {
			start = "-"
		}
		msgs, err := ew.rdb.XRangeN(rctx, ew.stream, start, "+", 1000).Result()
		if err != nil {
			return
		}
		for _, m := range msgs {
			ew.take(m)
			ew.cursor = m.ID
		}
		if len(msgs) < 1000 {
			ew.reads++
			return
		}
	}
}

// take records one stream entry.
func (ew *eventWatch) take(m redis.XMessage) {
	ew.entries++
	raw, _ := m.Values["event"].(string)
	var ev seckill.OrderEvent
	if err := json.Unmarshal([]byte(raw), &ev); err != nil || ev.ID == "" || ev.Subject == "" {
		ew.broken = append(ew.broken, fmt.Sprintf("entry %s: %.200s", m.ID, raw))
		return
	}
	if _, seen := ew.events[ev.ID]; seen {
		return
	}
	ew.events[ev.ID] = streamEvent{order: ev.Subject, sequence: ev.Sequence, typ: ev.Type, entry: m.ID}
	ew.orders[ev.Subject] = append(ew.orders[ev.Subject], ev.ID)
}

// entryBefore reports whether stream entry id a is before b ("0": before
// every entry).
func entryBefore(a, b string) bool {
	ams, aseq := entryID(a)
	bms, bseq := entryID(b)
	return ams < bms || ams == bms && aseq < bseq
}

func entryID(id string) (ms, seq uint64) {
	t, s, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(t, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// outboxRow is a committed event: a row of the outbox table.
type outboxRow struct {
	id, order, typ string
	sequence       int64
	sent           bool
}

// An event is unsent while its sent_at is 1970-01-01 00:00:00 (or NULL), or
// while it is batched (00:00:01) and its batch's row is not sent
// (docs/DEPLOY.md, "Unsent in SQL").
const (
	pendingEvents = `SELECT (SELECT COUNT(*) FROM order_events WHERE sent_at IS NULL OR sent_at = '1970-01-01 00:00:00')
+ (SELECT COALESCE(SUM(events), 0) FROM order_event_batches WHERE sent_at = '1970-01-01 00:00:00')`
	outboxRows = `SELECT e.id, e.aggregateid, e.type, e.sequence,
COALESCE(e.sent_at > '1970-01-01 00:00:01' OR (e.sent_at = '1970-01-01 00:00:01' AND COALESCE(b.sent_at > '1970-01-01 00:00:00', TRUE)), FALSE)
FROM order_events e LEFT JOIN order_event_batches b ON b.id = e.batch`
)

// eventsDrained waits up to within for every committed event to be marked
// sent: a relay killed while it held rows leaves them to the others once
// its lease lapses.
func eventsDrained(ctx context.Context, db *sql.DB, within time.Duration) (pending int64, err error) {
	deadline := time.Now().Add(within)
	for {
		pending, err = reread(ctx, func(ctx context.Context) (n int64, err error) {
			return n, db.QueryRowContext(ctx, pendingEvents).Scan(&n)
		})
		if err != nil || pending == 0 || time.Now().After(deadline) {
			if err != nil {
				err = fmt.Errorf("chaos: the events pending: %w", err)
			}
			return pending, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// readOutbox reads every committed event, trying again on a failed read
// (reread).
func readOutbox(ctx context.Context, db *sql.DB) ([]outboxRow, error) {
	return reread(ctx, func(ctx context.Context) ([]outboxRow, error) { return readOutboxOnce(ctx, db) })
}

func readOutboxOnce(ctx context.Context, db *sql.DB) ([]outboxRow, error) {
	rows, err := db.QueryContext(ctx, outboxRows)
	if err != nil {
		return nil, fmt.Errorf("chaos: read the outbox: %w", err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.id, &r.order, &r.typ, &r.sequence, &r.sent); err != nil {
			return nil, fmt.Errorf("chaos: read the outbox: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chaos: read the outbox: %w", err)
	}
	return out, nil
}
