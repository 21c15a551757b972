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
func (ws *watches) finish(ctx context.Context, st *finalState, db *sql.DB, log *slog.Logger) error {
	ws.halt()
	ws.lw.readAll(ctx)
	ws.fw.read(ctx)
	st.ledger, st.fences = ws.lw.breaks(), ws.fw.wentBack()
	pending, err := eventsDrained(ctx, db, eventsDrainBound)
	if err != nil {
		return err
	}
	ws.ew.read(ctx)
	outbox, err := readOutbox(ctx, db)
	if err != nil {
		return err
	}
	st.events = &eventsRead{stream: ws.ew.events, orders: ws.ew.orders, broken: ws.ew.broken, outbox: outbox, pending: pending}
	log.Info("chaos: watched all through", "ledger_reads", ws.lw.reads, "fence_reads", ws.fw.reads, "event_reads", ws.ew.reads,
		"stream_entries", ws.ew.entries, "events", len(ws.ew.events), "stream_rewinds", ws.ew.rewinds, "outbox_rows", len(outbox))
	if ws.lw.reads == 0 || ws.fw.reads == 0 || ws.ew.reads == 0 {
		// A watch that never read would pass whatever happened.
		return fmt.Errorf("chaos: the checker never read the ledger (%d reads), the fences (%d) or the events (%d)", ws.lw.reads, ws.fw.reads, ws.ew.reads)
	}
	return nil
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
