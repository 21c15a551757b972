package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// eventsDrainBound is how long after the books the checker waits for every
// committed event to be marked sent: a relay killed while it held rows
// leaves them to the others once its 30 s lease lapses.
const eventsDrainBound = 90 * time.Second

// watches are the checker's reads all through the campaign: the ledger,
// the fences and the events' stream.
type watches struct {
	lw   *ledgerWatch
	fw   *fenceWatch
	ew   *eventWatch
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// startWatches starts the watches; halt stops them.
func startWatches(ctx context.Context, lw *ledgerWatch, fw *fenceWatch, ew *eventWatch) *watches {
	ws := &watches{lw: lw, fw: fw, ew: ew}
	wctx, stop := context.WithCancel(ctx)
	ws.stop = stop
	ws.wg.Go(func() { every(wctx, ledgerEvery, lw.readAll) })
	ws.wg.Go(func() { every(wctx, fenceEvery, fw.read) })
	ws.wg.Go(func() { every(wctx, eventsEvery, ew.read) })
	return ws
}

// halt stops the watches and waits for their reads in flight; again, it
// does nothing.
func (ws *watches) halt() {
	ws.stop()
	ws.wg.Wait()
}

// finish stops the watches, reads once more (the events once every
// committed one was sent, or eventsDrainBound passed), and puts what they
// found in st.
//
// The instances still run while the checker reads: a payment window can
// lapse after st.orders was read, and its expiry's event then reaches the
// stream past the order's row as read. So the events are held to an
// orders' read that did not move while they were read: the orders are read
// again after the stream and the outbox, and the whole read is done again
// until both reads of the orders agree (eventsStill).
func (ws *watches) finish(ctx context.Context, st *finalState, db *sql.DB, log *slog.Logger) error {
	ws.halt()
	ws.lw.readAll(ctx)
	ws.fw.read(ctx)
	st.ledger, st.fences = ws.lw.breaks(), ws.fw.wentBack()
	before := st.orders
	var read *eventsRead
	rounds := 0
	for deadline := time.Now().Add(eventsStill); ; rounds++ {
		pending, err := eventsDrained(ctx, db, eventsDrainBound)
		if err != nil {
			return err
		}
		ws.ew.read(ctx)
		outbox, err := readOutbox(ctx, db)
		if err != nil {
			return err
		}
		after, err := readOrders(ctx, db)
		if err != nil {
			return err
		}
		read = &eventsRead{stream: ws.ew.events, orders: ws.ew.orders, broken: ws.ew.broken, outbox: outbox, pending: pending, rows: after}
		if sameChanges(before, after) || time.Now().After(deadline) {
			break
		}
		before = after
		time.Sleep(time.Second)
	}
	st.events = read
	log.Info("chaos: watched all through", "ledger_reads", ws.lw.reads, "fence_reads", ws.fw.reads, "event_reads", ws.ew.reads,
		"stream_entries", ws.ew.entries, "events", len(ws.ew.events), "stream_rewinds", ws.ew.rewinds, "outbox_rows", len(read.outbox),
		"orders_moved_while_read", rounds)
	if ws.lw.reads == 0 || ws.fw.reads == 0 || ws.ew.reads == 0 {
		// A watch that never read would pass whatever happened.
		return fmt.Errorf("chaos: the checker never read the ledger (%d reads), the fences (%d) or the events (%d)", ws.lw.reads, ws.fw.reads, ws.ew.reads)
	}
	return nil
}

// eventsStill bounds how long finish waits for the orders to stop moving:
// the last expiries come one payment window after the last purchase.
const eventsStill = 2 * time.Minute

// sameChanges reports whether two reads of the orders hold the same orders
// with the same committed changes (event_sequence).
func sameChanges(a, b []orderRow) bool {
	if len(a) != len(b) {
		return false
	}
	seq := make(map[string]int64, len(a))
	for _, o := range a {
		seq[o.ID] = o.Events
	}
	for _, o := range b {
		if n, ok := seq[o.ID]; !ok || n != o.Events {
			return false
		}
	}
	return true
}

// checkWatches reports what the ledger's and the fences' watches found.
func checkWatches(h *History, ops []Op, st finalState, add func(inv, what string, match func(Op) bool)) {
	for _, b := range st.ledger {
		add(InvLedger, fmt.Sprintf("activity %d, stock epoch %d, at %s: %s: off by %d", b.activity, b.epoch, h.at(b.at), b.ledger, b.off),
			func(o Op) bool {
				return o.Activity == b.activity && o.Kind == "buy" && o.Complete.After(b.at.Add(-10*time.Second)) && o.Invoke.Before(b.at)
			})
	}
	for _, b := range st.fences {
		add(InvFenceForward, fmt.Sprintf("activity %d: fence %d at %s, then %d at %s", b.activity, b.from.fence, h.at(b.from.at), b.to.fence, h.at(b.to.at)),
			func(o Op) bool {
				return o.Activity == b.activity && o.Kind == "buy" && o.Complete.After(b.from.at.Add(-5*time.Second)) && o.Invoke.Before(b.to.at)
			})
	}
}
