package waitingroom

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Held requests (queue/mine?wait=S): each waits in memory for its user's
// state to change. One watch per room with holders on this instance reads
// the room's notes (note.lua) every notesEvery, however many requests it
// holds, and wakes the holders of the users a note names (or all of them
// when the room closed, or when it may have missed a note). A woken holder
// reads its status again; one whose state did not change holds on. No
// holder waits past its S whatever the notes say: its own timer ends it.

// DefaultMaxHeld is the most requests an instance holds at once
// (SECKILL_ROOM_MAX_HELD).
const DefaultMaxHeld = 100_000

// notesEvery is how often a room's watch reads its notes: a held caller
// learns of an admission or the closing within it, plus one status read.
const notesEvery = 200 * time.Millisecond

// notesTimeout bounds one read of the notes.
const notesTimeout = time.Second

// watchLinger is how long a room's watch outlives its last holder, so a
// crowd polling again at once does not restart it each time.
const watchLinger = 5 * time.Second

// holds is this instance's held requests and the watches of their rooms.
// Its owner stops it with stop, which ends every watch and answers every
// held request at once.
type holds struct {
	st  *Store
	log *slog.Logger
	max int64

	ctx    context.Context // ends at stop: every watch's
	cancel context.CancelFunc
	wg     sync.WaitGroup // the watches running

	mu      sync.Mutex
	rooms   map[int64]*watch
	held    int64
	stopped chan struct{} // closed by stop: holders answer at once
}

// watch is one room's watch: its holders, under holds.mu, and its cursor,
// its goroutine's own.
type watch struct {
	id        int64
	holders   map[int64][]*hold
	n         int
	idleSince time.Time
	ready     chan struct{} // closed once the cursor is first set

	synced, wasSynced bool
	cursor            string
	count             int64
}

// hold is one held request.
type hold struct {
	w    *watch
	user int64
	wake chan struct{} // one slot: a wake-up not yet seen is not lost
}

func newHolds(st *Store, log *slog.Logger, max int64) *holds {
	ctx, cancel := context.WithCancel(context.Background())
	return &holds{st: st, log: log, max: max, ctx: ctx, cancel: cancel,
		rooms: map[int64]*watch{}, stopped: make(chan struct{})}
}

// add holds a request of the user in the room, starting the room's watch
// if it has none; nil when this instance holds its most already or is
// stopping.
func (hs *holds) add(activityID, userID int64) *hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.stopping() || hs.held >= hs.max {
		return nil
	}
	w := hs.rooms[activityID]
	if w == nil {
		w = &watch{id: activityID, holders: map[int64][]*hold{}, ready: make(chan struct{})}
		hs.rooms[activityID] = w
		hs.wg.Add(1)
		go hs.run(w)
	}
	h := &hold{w: w, user: userID, wake: make(chan struct{}, 1)}
	w.holders[userID] = append(w.holders[userID], h)
	w.n++
	hs.held++
	return h
}

// remove ends a hold.
func (hs *holds) remove(h *hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	w := h.w
	w.holders[h.user] = slices.DeleteFunc(w.holders[h.user], func(o *hold) bool { return o == h })
	if len(w.holders[h.user]) == 0 {
		delete(w.holders, h.user)
	}
	w.n--
	hs.held--
	if w.n == 0 {
		w.idleSince = time.Now()
	}
}

// stop answers every held request at once, refuses new holds and ends
// every watch, waiting for them. It may be called more than once.
func (hs *holds) stop() {
	hs.mu.Lock()
	select {
	case <-hs.stopped:
	default:
		close(hs.stopped)
	}
	hs.mu.Unlock()
	hs.cancel()
	hs.wg.Wait()
}

// stopping reports whether the holds are stopped.
func (hs *holds) stopping() bool {
	select {
	case <-hs.stopped:
		return true
	default:
		return false
	}
}

// wake is why a hold's wait ended.
type wakeReason int

const (
	wokenByNote wakeReason = iota // a note named the user, or the room closed
	wokenByTime                   // until passed, or the holds stop
	wokenByGone                   // ctx ended: nobody waits for the answer
)

// wait blocks until the hold is woken, until, ctx ends or the holds stop,
// and says which.
func (h *hold) wait(ctx context.Context, hs *holds, until time.Time) wakeReason {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-h.wake:
		return wokenByNote
	case <-t.C:
	case <-hs.stopped:
	case <-ctx.Done():
		return wokenByGone
	}
	return wokenByTime
}

// readyWait bounds a holder's wait for its room's first read of the notes:
// with Redis down, the status read that follows answers 503 at once
// rather than at the hold's end.
const readyWait = notesTimeout + notesEvery

// ready waits, until at most until or readyWait, for the room's watch to
// have read its cursor: a note written after the holder's status read is
// then one the watch reads (one written before a late first read can only
// be missed until the hold's own end).
func (h *hold) ready(ctx context.Context, hs *holds, until time.Time) {
	t := time.NewTimer(min(time.Until(until), readyWait))
	defer t.Stop()
	select {
	case <-h.w.ready:
	case <-t.C:
	case <-hs.stopped:
	case <-ctx.Done():
	}
}

// run is a room's watch: it reads the notes every notesEvery until the
// holds stop or the room has had no holder for watchLinger.
func (hs *holds) run(w *watch) {
	defer hs.wg.Done()
	t := time.NewTicker(notesEvery)
	defer t.Stop()
	for {
		hs.poll(w)
		select {
		case <-hs.ctx.Done():
			return
		case <-t.C:
		}
		if hs.retire(w) {
			return
		}
	}
}

// retire forgets the room's watch when it has had no holder for
// watchLinger; the next holder starts another.
func (hs *holds) retire(w *watch) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if w.n > 0 || time.Since(w.idleSince) < watchLinger {
		return false
	}
	delete(hs.rooms, w.id)
	return true
}

// poll reads the room's notes once and wakes whom they name. A note
// missed (its number skipped: trimmed, or the reader's cursor ahead of
// the stream after a failover) or a read that failed wakes every holder
// of the room once the notes can be read again, and starts the cursor
// afresh: they read their status, and hold on if it did not change.
func (hs *holds) poll(w *watch) {
	ctx, cancel := context.WithTimeout(hs.ctx, notesTimeout)
	defer cancel()
	if !w.synced {
		hs.sync(ctx, w)
		return
	}
	rd, err := hs.st.readNotes(ctx, w.id, w.cursor)
	if err != nil {
		hs.log.Debug("waiting room notes not read; the holders are woken when they are", "activity_id", w.id, "err", err)
		w.synced = false
		return
	}
	missed := false
	for _, nt := range rd.notes {
		missed = missed || nt.n != w.count+1
		w.count, w.cursor = nt.n, nt.id
		if nt.closed != "" {
			hs.wakeAll(w)
		} else {
			hs.wake(w, nt.users)
		}
	}
	if missed || (len(rd.notes) < notesBatch && rd.count != w.count) {
		hs.sync(ctx, w)
	}
}

// sync sets the watch's cursor to the room's last note; every sync after
// the first wakes every holder, as notes may have been missed.
func (hs *holds) sync(ctx context.Context, w *watch) {
	rd, err := hs.st.readNotes(ctx, w.id, "")
	if err != nil {
		hs.log.Debug("waiting room notes not read; the next read retries", "activity_id", w.id, "err", err)
		w.synced = false
		return
	}
	w.count, w.cursor, w.synced = rd.count, rd.last, true
	if w.wasSynced {
		hs.wakeAll(w)
		return
	}
	w.wasSynced = true
	close(w.ready)
}

// wake wakes the holders of the users.
func (hs *holds) wake(w *watch, users []int64) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, u := range users {
		for _, h := range w.holders[u] {
			h.signal()
		}
	}
}

// wakeAll wakes every holder of the room.
func (hs *holds) wakeAll(w *watch) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, hh := range w.holders {
		for _, h := range hh {
			h.signal()
		}
	}
}

func (h *hold) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}
