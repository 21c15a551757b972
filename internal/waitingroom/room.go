// Package waitingroom is an activity's waiting room (docs/API.md "Waiting
// room"): a line in Redis that turns a crowd far larger than the stock into
// a fair order, and admissions that let in only as many buyers as the units
// left can serve.
//
// The data, per activity, all under the activity's hash tag (store.go):
//   - the room, a hash: on, the window, the draw's seed, counters, the pace;
//   - the line, a sorted set of the places not yet admitted: a pre-queue
//     place is SHA1(seed:user) (the draw, fixed by a seed nobody sees before
//     the start), a later one 2^52 + its arrival number (join.lua);
//   - the open admissions, a sorted set of user -> until;
//   - the users' ends, a hash: done with an order, closed with a reason,
//     or lapsed.
//
// Every instance runs an admitter (Room.Run) that steps each room a few
// times a second (admit.lua): lapse what ran out, admit the next places
// while the open admissions are fewer than the units left. The deduct
// (internal/stock/deduct.lua) takes units only for open admissions, so an
// open admission's unit waits for its own buyer.
package waitingroom

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
)

// Defaults of Config's zero values.
const (
	DefaultAdmissionTTL = 60 * time.Second
	// DefaultMaxRate is the most admissions a second one room gives: about
	// a quarter of what one hot activity sells on a 2-core box
	// (loadtest/RESULTS.md), so the purchase path is never flooded even when
	// every admitted buyer buys at once.
	DefaultMaxRate = 2000
	// DefaultTick is how often an instance steps each room.
	DefaultTick = 100 * time.Millisecond
	// DefaultMaxPlaces bounds a room's places not yet admitted
	// (SECKILL_ROOM_MAX_PLACES): about 100 MB of Redis, so forged joins
	// cannot grow a room without end.
	DefaultMaxPlaces = 1_000_000
)

// pollBudget is the polls a second that one room's waiting users are
// spread to: a user at position p is told to come back after about
// p/pollBudget seconds, so the polls of a line of n cost about
// pollBudget*(1+ln(n/pollBudget)) a second, not n.
const pollBudget = 2000

// fullRetry is the Retry-After of a join refused by a full room: places
// free up as the line is admitted, not within a second.
const fullRetry = 10 * time.Second

// Config tunes the rooms.
type Config struct {
	AdmissionTTL time.Duration // 0: DefaultAdmissionTTL
	MaxRate      float64       // 0: DefaultMaxRate
	Tick         time.Duration // 0: DefaultTick
	MaxPlaces    int64         // 0: DefaultMaxPlaces
	// AdmissionIdle lapses an admission early when its buyer was not seen
	// (polled queue/mine, joined again or tried to buy) for this long
	// (SECKILL_ADMISSION_IDLE); 0: every admission lasts AdmissionTTL.
	AdmissionIdle time.Duration
	// MaxHeld is the most queue/mine requests this instance holds at once
	// (SECKILL_ROOM_MAX_HELD); 0: DefaultMaxHeld; below 0: none.
	MaxHeld int64
	// Payments says orders may expire unpaid: a sold-out room then stays
	// open while an unpaid order could give its unit back.
	Payments bool
}

// Deps are a room's dependencies.
type Deps struct {
	Store *Store
	// Activity returns the activity as buyers may see it, or
	// activity_not_found.
	Activity func(ctx context.Context, id int64) (seckill.Activity, error)
	// Holder returns the order the user holds in the activity, if any (a
	// look-up that fails counts as none, as for the purchase path's
	// precedence); inBuyers is whether the activity's buyer set holds the
	// user, as the room's read just said, so the holder need not read it.
	Holder func(ctx context.Context, activityID, userID int64, inBuyers bool) (seckill.Order, bool)
	// Verify asks the user-verification service about the user (nil:
	// everyone is approved); usercheck.ErrRejected is a refusal.
	Verify func(ctx context.Context, userID, activityID int64) error
	// Sold reports what the database holds of the activity: the units its
	// orders keep, the unpaid ones among them, and the total.
	Sold       func(ctx context.Context, activityID int64) (held, unpaid, total int64, err error)
	Log        *slog.Logger
	Registerer prometheus.Registerer
}

// Room serves every activity's waiting room. Its admitter runs in Run.
type Room struct {
	cfg  Config
	deps Deps
	st   *Store
	log  *slog.Logger
	m    *metrics
	// holds are the requests held until their user's state changes.
	holds *holds

	// known is what this instance knows of the rooms in Redis, listed each
	// second: replaced whole under mu, so the purchase path's On reads it
	// without a lock.
	known     atomic.Pointer[map[int64]roomState]
	mu        sync.Mutex
	listedAt  time.Time
	soldAt    map[int64]time.Time // when each room's orders were last counted
	etaChecks map[int64]*etaCheck
}

// New returns a Room; Run starts its admitter.
func New(cfg Config, deps Deps) (*Room, error) {
	if cfg.AdmissionTTL <= 0 {
		cfg.AdmissionTTL = DefaultAdmissionTTL
	}
	if cfg.MaxRate <= 0 {
		cfg.MaxRate = DefaultMaxRate
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.MaxPlaces <= 0 {
		cfg.MaxPlaces = DefaultMaxPlaces
	}
	if cfg.MaxHeld == 0 {
		cfg.MaxHeld = DefaultMaxHeld
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	r := &Room{cfg: cfg, deps: deps, st: deps.Store, log: deps.Log, m: newMetrics(deps.Registerer, deps.Log),
		soldAt: map[int64]time.Time{}, etaChecks: map[int64]*etaCheck{}}
	r.holds = newHolds(deps.Store, deps.Log, max(cfg.MaxHeld, 0))
	r.known.Store(&map[int64]roomState{})
	return r, nil
}

// rooms is the known rooms; the map must not be changed.
func (r *Room) rooms() map[int64]roomState { return *r.known.Load() }

// setRoom records one room's state in a copy of the known rooms.
func (r *Room) setRoom(id int64, rs roomState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := maps.Clone(r.rooms())
	next[id] = rs
	r.known.Store(&next)
}

// Open turns the activity's room on (or rebuilds it in Redis).
func (r *Room) Open(ctx context.Context, a seckill.Activity) error {
	if a.WaitingRoom == nil {
		return nil
	}
	err := r.st.Open(ctx, a.ID, Window{OpensAt: a.WaitingRoom.OpensAt, StartsAt: a.StartsAt, EndsAt: a.EndsAt, Seed: a.WaitingRoom.Seed, Hold: a.Limit()})
	if err == nil {
		r.setRoom(a.ID, roomState{on: true})
	}
	return err
}

// Shut turns the activity's room off.
func (r *Room) Shut(ctx context.Context, activityID int64) error {
	err := r.st.Shut(ctx, activityID)
	if err == nil {
		r.setRoom(activityID, roomState{})
	}
	return err
}

// On reports, from memory at most a second old, whether the activity has a
// waiting room turned on. The deduct checks admissions itself; this only
// spares activities without a room any look-up.
func (r *Room) On(activityID int64) bool { return r.rooms()[activityID].on }

// Admitted reports whether the user holds an open admission to buy in the
// activity; on is false when the activity has no room after all. A sale ops
// stopped is stock.ErrPaused or stock.ErrEnded, whatever the admission. An
// admitted user counts as seen for busy more (a purchase in flight, which
// may take that long to reach its deduct without the buyer polling): the
// idle lapse must not take the admission from under their purchase.
func (r *Room) Admitted(ctx context.Context, activityID, userID int64, busy time.Duration) (admitted, on bool, err error) {
	until, on, err := r.st.admittedUntil(ctx, activityID, userID)
	if err != nil {
		return false, false, err
	}
	admitted = time.Now().Before(until)
	if admitted {
		r.touch(ctx, activityID, userID, busy)
	}
	return admitted, on, nil
}

// touch records, when admissions lapse on idleness, that the admitted user
// was seen now, and is busy for busy more; a failure only risks the early
// lapse.
func (r *Room) touch(ctx context.Context, activityID, userID int64, busy time.Duration) {
	if r.cfg.AdmissionIdle <= 0 {
		return
	}
	if err := r.st.seen(ctx, activityID, userID, busy); err != nil {
		r.log.DebugContext(ctx, "admitted buyer's poll not recorded", "activity_id", activityID, "err", err)
	}
}

// Finish uses up the admissions of buyers with a final purchase answer:
// orders maps a user to the order they hold, refused a user to the code of
// a final refusal. A failure is logged: the admission then lapses at its
// end, and its unit goes on to the next place in line all the same.
func (r *Room) Finish(ctx context.Context, activityID int64, orders, refused map[int64]string) {
	ends := make(map[int64]string, len(orders)+len(refused))
	for u, id := range orders {
		ends[u] = "d:" + id
	}
	for u, code := range refused {
		ends[u] = "c:" + code
	}
	if err := r.st.finish(ctx, activityID, ends); err != nil {
		r.log.WarnContext(ctx, "admissions not used up; they lapse at their end", "activity_id", activityID, "buyers", len(ends), "err", err)
	}
}

// Join gives the user a place in the activity's room (docs/API.md), or
// returns the place they have.
func (r *Room) Join(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error) {
	a, err := r.deps.Activity(ctx, activityID)
	if err != nil {
		return seckill.QueueStatus{}, err
	}
	if r.deps.Verify == nil && !r.holdsSeen(ctx, a.ID, userID) {
		// Nothing to ask between the user's standing and the place: one
		// call reads the one and gives the other, unless the buyer set
		// holds the user (who may hold an order: a holder gets no place).
		answer, after, err := r.st.join(ctx, a.ID, userID, r.cfg.MaxPlaces, false)
		if err != nil || answer != isBuyer {
			return r.joined(ctx, a, userID, answer, after, err)
		}
	}
	st, err := r.st.standing(ctx, a.ID, userID)
	if err != nil {
		return seckill.QueueStatus{}, unavailable(err)
	}
	if q, err, done := r.walk(ctx, joinChecks, &queueAsk{a: a, userID: userID, st: st}); done {
		return q, err
	}
	answer, after, err := r.st.join(ctx, a.ID, userID, r.cfg.MaxPlaces, true)
	return r.joined(ctx, a, userID, answer, after, err)
}

// holdsSeen reports whether this process saw the user buy in the activity
// and the order is still held: the holder's answer then goes through the
// checks in their order (joinChecks). Asked with inBuyers false, the
// holder reads nothing for a user it never saw buy.
func (r *Room) holdsSeen(ctx context.Context, activityID, userID int64) bool {
	if r.deps.Holder == nil {
		return false
	}
	_, ok := r.deps.Holder(ctx, activityID, userID, false)
	return ok
}

// joined turns join.lua's answer and the user's standing after it into the
// join's answer.
func (r *Room) joined(ctx context.Context, a seckill.Activity, userID int64, answer string, after standing, err error) (seckill.QueueStatus, error) {
	switch {
	case errors.Is(err, ErrNotReplicated):
		// The place may be lost in a failover; joining again is safe.
		return seckill.QueueStatus{}, seckill.Unavailable("the waiting room could not keep your place safe; join again", err)
	case err != nil:
		return seckill.QueueStatus{}, unavailable(err)
	}
	if err := failClosed(a, after); err != nil {
		return seckill.QueueStatus{}, err
	}
	switch {
	case answer == noRoom:
		return seckill.QueueStatus{}, noWaitingRoom(a.ID)
	case answer == notOpen:
		return seckill.QueueStatus{}, notOpenYet(after.opens)
	case answer == isEnded, answer == isClosed && after.closed == isEnded:
		return seckill.QueueStatus{}, seckill.Ended(a)
	case answer == isPaused, answer == have && after.pausedPlace():
		return seckill.QueueStatus{}, seckill.SalePaused()
	case answer == isClosed:
		return seckill.QueueStatus{}, soldOut()
	case answer == isFull:
		r.m.full.Inc()
		e := seckill.Busy("the waiting room is full; no place was given: try again later", nil)
		e.RetryAfter = max(e.RetryAfter, fullRetry)
		return seckill.QueueStatus{}, e
	}
	return r.status(ctx, a.ID, userID, after)
}

// failClosed refuses while the database says the activity has a room and
// Redis lost it: no place is given, and no "no waiting room" said, until
// the books sweep, a reconcile or a stock change restores the room.
func failClosed(a seckill.Activity, st standing) error {
	if st.lost && a.WaitingRoom != nil {
		return roomLost()
	}
	return nil
}

func roomLost() *seckill.Error {
	return seckill.Unavailable("the waiting room is being restored after Redis lost it; nothing changed: try again in a few seconds", seckill.ErrRoomLost)
}

// Restore writes the activity's room to Redis again when Redis lost it
// (the books sweep's check); it reports whether it did.
func (r *Room) Restore(ctx context.Context, a seckill.Activity) (bool, error) {
	if a.WaitingRoom == nil {
		return false, nil
	}
	lost, err := r.st.lost(ctx, a.ID)
	if err != nil || !lost {
		return false, err
	}
	if err := r.Open(ctx, a); err != nil {
		return false, err
	}
	r.log.WarnContext(ctx, "waiting room restored: Redis had lost it; its line and admissions are gone, buyers join again", "activity_id", a.ID)
	return true, nil
}

func noWaitingRoom(id int64) error {
	return seckill.Errorf(seckill.ENoWaitingRoom, "activity %d has no waiting room; buy directly", id)
}

func notOpenYet(opens time.Time) error {
	return seckill.Errorf(seckill.ENotOpen, "the waiting room opens at %s", opens.UTC().Format(time.RFC3339))
}

func soldOut() error {
	return seckill.Errorf(seckill.ESoldOut, "the activity is sold out and no unit can come back")
}

func unavailable(err error) error {
	return seckill.Unavailable("Redis did not answer; the waiting room is unchanged", err)
}

// Sizes returns the places not yet admitted and the admissions open.
func (r *Room) Sizes(ctx context.Context, activityID int64) (waiting, admitted int64, err error) {
	return r.st.counts(ctx, activityID)
}
