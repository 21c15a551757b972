package outbox_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/outbox"
)

// An unsent event's sent_at is a sentinel time, not NULL (the mark then
// overwrites it in place). The retention must not take the sentinel for an
// old send and delete unsent events; a row written NULL, by an instance
// older than the sentinel during a rolling upgrade, is unsent too and is
// sent.
// Can fail: with DeleteEvents' "sent_at > unsent" gone, the first delete
// takes every unsent event; without the relay's "OR sent_at IS NULL", the
// NULL row is never sent (the drain waits for it, or it is missing).
func TestUnsentEventsAreKeptAndSentWhateverTheirMark(t *testing.T) {
	w := newWorld(t)
	w.sell(t, 9)
	ctx := context.Background()
	db, err := sql.Open("mysql", w.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One order's events as an older instance wrote them.
	res, err := db.ExecContext(ctx, "UPDATE order_events SET sent_at = NULL WHERE aggregateid = (SELECT MIN(aggregateid) FROM order_events)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no row written NULL")
	}
	total, _, err := w.store.Outbox.PendingEvents(ctx)
	if err != nil || total < 9 {
		t.Fatalf("pending before the relay: %d, %v", total, err)
	}
	if n, err := w.store.Outbox.DeleteEvents(ctx, time.Now().Add(time.Hour), false, 1000); err != nil || n != 0 {
		t.Fatalf("the retention deleted %d unsent events (%v), want 0", n, err)
	}
	r := outbox.Start(w.store.Outbox, w.sink, outbox.Config{Poll: 10 * time.Millisecond})
	waitPending(t, w.store, 0)
	_ = r.Close()
	w.check(t)
	if n, err := w.store.Outbox.DeleteEvents(ctx, time.Now().Add(time.Hour), false, 1000); err != nil || n != total {
		t.Fatalf("the retention deleted %d of %d sent events (%v)", n, total, err)
	}
}
