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
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/usercheck"
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
)

// pollBudget is the polls a second that one room's waiting users are
// spread to: a user at position p is told to come back after about
// p/pollBudget seconds, so the polls of a line of n cost about
// pollBudget*(1+ln(n/pollBudget)) a second, not n.
const pollBudget = 2000

// Config tunes the rooms.
type Config struct {
	AdmissionTTL time.Duration // 0: DefaultAdmissionTTL
	MaxRate      float64       // 0: DefaultMaxRate
	Tick         time.Duration // 0: DefaultTick
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
	// Holder returns the order the user holds in the activity, if any.
	Holder func(ctx context.Context, activityID, userID int64) (seckill.Order, bool, error)
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

	mu        sync.Mutex
	on        map[int64]roomState // rooms listed in Redis, refreshed each second
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
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(deps.Registerer)
	if err != nil {
		return nil, err
	}
	return &Room{cfg: cfg, deps: deps, st: deps.Store, log: deps.Log, m: m,
		on: map[int64]roomState{}, soldAt: map[int64]time.Time{}, etaChecks: map[int64]*etaCheck{}}, nil
}

// AdmissionTTL is how long an admission lasts.
func (r *Room) AdmissionTTL() time.Duration { return r.cfg.AdmissionTTL }

// Open turns the activity's room on (or rebuilds it in Redis).
func (r *Room) Open(ctx context.Context, a seckill.Activity) error {
	if a.WaitingRoom == nil {
		return nil
	}
	err := r.st.Open(ctx, a.ID, Window{OpensAt: a.WaitingRoom.OpensAt, StartsAt: a.StartsAt, EndsAt: a.EndsAt, Seed: a.WaitingRoom.Seed})
	if err == nil {
		r.mu.Lock()
		r.on[a.ID] = roomState{on: true}
		r.mu.Unlock()
	}
	return err
}

// Shut turns the activity's room off.
func (r *Room) Shut(ctx context.Context, activityID int64) error {
	err := r.st.Shut(ctx, activityID)
	if err == nil {
		r.mu.Lock()
		r.on[activityID] = roomState{}
		r.mu.Unlock()
	}
	return err
}

// On reports, from memory at most a second old, whether the activity has a
// waiting room turned on. The deduct checks admissions itself; this only
// spares activities without a room any look-up.
func (r *Room) On(activityID int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.on[activityID].on
}

// Admitted reports whether the user holds an open admission to buy in the
// activity; on is false when the activity has no room after all.
func (r *Room) Admitted(ctx context.Context, activityID, userID int64) (admitted, on bool, err error) {
	until, on, err := r.st.admittedUntil(ctx, activityID, userID)
	if err != nil {
		return false, false, err
	}
	return time.Now().Before(until), on, nil
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
	st, err := r.st.standing(ctx, a.ID, userID)
	if err != nil {
		return seckill.QueueStatus{}, unavailable(err)
	}
	// A lapsed user joins again, at the back; any other place is kept.
	if st.hasPlace() && !st.lapsedOnly() {
		return r.status(ctx, a.ID, userID, st)
	}
	if err := r.admissible(ctx, a, userID, st); err != nil {
		return seckill.QueueStatus{}, err
	}
	answer, err := r.st.join(ctx, a.ID, userID)
	switch {
	case errors.Is(err, ErrNotReplicated):
		// The place may be lost in a failover; joining again is safe.
		return seckill.QueueStatus{}, seckill.Unavailable("the waiting room could not keep your place safe; join again", err)
	case err != nil:
		return seckill.QueueStatus{}, unavailable(err)
	case answer == noRoom:
		return seckill.QueueStatus{}, noWaitingRoom(a.ID)
	case answer == notOpen:
		return seckill.QueueStatus{}, notOpenYet(st.opens)
	case answer == isEnded:
		return seckill.QueueStatus{}, seckill.Errorf(seckill.EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
	case answer == isClosed:
		return seckill.QueueStatus{}, soldOut()
	}
	if st, err = r.st.standing(ctx, a.ID, userID); err != nil {
		return seckill.QueueStatus{}, unavailable(err)
	}
	return r.status(ctx, a.ID, userID, st)
}

// admissible checks, for a user without a place, what join.lua cannot: the
// window's answers first, then the order they hold, then the user check.
func (r *Room) admissible(ctx context.Context, a seckill.Activity, userID int64, st standing) error {
	switch {
	case !st.on:
		return noWaitingRoom(a.ID)
	case st.now.Before(st.opens):
		return notOpenYet(st.opens)
	case !st.now.Before(st.ends):
		return seckill.Errorf(seckill.EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
	}
	if r.deps.Holder != nil {
		o, ok, err := r.deps.Holder(ctx, a.ID, userID)
		switch {
		case err != nil:
			return seckill.Unavailable("the order database did not answer; you have no place yet", err)
		case ok:
			return &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "you already hold an order for this activity",
				OrderID: o.ID, OrderStatus: o.Status}
		}
	}
	if st.closed != "" {
		if st.closed == isEnded {
			return seckill.Errorf(seckill.EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
		}
		return soldOut()
	}
	if r.deps.Verify == nil {
		return nil
	}
	switch err := r.deps.Verify(ctx, userID, a.ID); {
	case errors.Is(err, usercheck.ErrRejected):
		return &seckill.Error{Code: seckill.EUserRejected, Message: "the user-verification service rejected this user; no place was given", Err: err}
	case err != nil:
		e := seckill.Unavailable("the user-verification service failed or timed out; no place was given", err)
		e.RetryAfter = max(e.RetryAfter, usercheck.RetryAfter(err))
		return e
	}
	return nil
}

// Mine returns the user's standing in the activity's room.
func (r *Room) Mine(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error) {
	if _, err := r.deps.Activity(ctx, activityID); err != nil {
		return seckill.QueueStatus{}, err
	}
	st, err := r.st.standing(ctx, activityID, userID)
	if err != nil {
		return seckill.QueueStatus{}, unavailable(err)
	}
	if !st.hasPlace() {
		return seckill.QueueStatus{}, seckill.Errorf(seckill.ENotInQueue, "you have no place in the waiting room of activity %d; join it first", activityID)
	}
	return r.status(ctx, activityID, userID, st)
}

// status turns a standing into the answer the buyer sees. Only a buyer
// whose admission lapsed while they were buying costs a database read.
func (r *Room) status(ctx context.Context, activityID, userID int64, st standing) (seckill.QueueStatus, error) {
	q := seckill.QueueStatus{ActivityID: activityID}
	switch {
	case len(st.end) > 2 && st.end[:2] == "d:":
		q.State, q.OrderID = seckill.QueueDone, st.end[2:]
	case len(st.end) > 2 && st.end[:2] == "c:":
		q.State, q.Reason = seckill.QueueClosed, st.end[2:]
	case st.closed == isEnded:
		q.State, q.Reason = seckill.QueueClosed, seckill.EEnded
	case st.until > st.now.UnixMilli():
		q.State, q.AdmittedUntil = seckill.QueueAdmitted, time.UnixMilli(st.until).UTC()
		q.Refresh = time.Second
	case st.end == "l" || st.until >= 0:
		q.State = seckill.QueueLapsed
		if st.buyer && r.deps.Holder != nil {
			// The purchase's end was not written (Redis failed then):
			// the buyer set says they may hold an order.
			if o, ok, err := r.deps.Holder(ctx, activityID, userID); err == nil && ok {
				r.Finish(ctx, activityID, map[int64]string{userID: o.ID}, nil)
				q.State, q.OrderID = seckill.QueueDone, o.ID
			}
		}
	case st.closed != "":
		q.State, q.Reason = seckill.QueueClosed, st.closed
	case st.now.Before(st.starts):
		q.State = seckill.QueuePrequeue
		q.Refresh = max(prequeueRefresh(st).Round(time.Second), time.Second)
	default:
		q.State, q.Position = seckill.QueueWaiting, st.rank+1
		q.ETA, q.HasETA = eta(st)
		q.Refresh = jitter(waitingRefresh(q.Position, q.ETA, q.HasETA, r.cfg.AdmissionTTL)).Round(time.Second)
	}
	return q, nil
}

// eta estimates the time until a waiting user at st is admitted. The
// places within the units no admission holds come in at the pace the
// admitter allows; the places behind them wait for units to come back
// (purchases, lapses, expiries), at the measured admission rate. None while
// no unit is left (a unit may or may not come back), or when nothing was
// admitted lately.
func eta(st standing) (time.Duration, bool) {
	position := float64(st.rank + 1)
	free := float64(st.remain - st.admitted)
	var s float64
	switch {
	case st.remain <= 0:
		return 0, false
	case position <= free && st.pace > 0:
		s = position / st.pace
	case st.rate >= 0.01:
		s = max(free, 0)/max(st.pace, 1) + (position-max(free, 0))/st.rate
	default:
		return 0, false
	}
	if s > 365*24*3600 {
		return 0, false
	}
	return time.Duration(math.Ceil(s)) * time.Second, true
}

// waitingRefresh spreads a line's polls: about position/pollBudget seconds,
// at least a second, and at most half the estimate (or half an admission's
// lifetime without one), so nobody misses their admission.
func waitingRefresh(position int64, eta time.Duration, hasETA bool, ttl time.Duration) time.Duration {
	limit := ttl / 2
	if hasETA {
		limit = max(limit, eta/2)
	}
	d := time.Duration(math.Ceil(float64(position)/pollBudget)) * time.Second
	return min(max(d, time.Second), max(limit, time.Second))
}

// prequeueRefresh is the pre-queue's: every prequeuePeriod (longer for a
// pre-queue too large to poll that often within pollBudget), and near the
// start, the start plus a random share of the time a line of this size is
// spread over, so that the draw is not met by every member at once.
func prequeueRefresh(st standing) time.Duration {
	until := st.starts.Sub(st.now)
	spread := time.Duration(math.Ceil(float64(st.waiting)/pollBudget)) * time.Second
	if period := max(prequeuePeriod, spread); until > period {
		return jitter(period)
	}
	return until + time.Duration(rand.Int64N(int64(spread)+1)) //nolint:gosec // G404: spreading polls needs no secret randomness
}

// prequeuePeriod is how often a pre-queue member is asked to poll while the
// start is far: nothing changes for them until then.
const prequeuePeriod = 10 * time.Second

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
	c, err := r.st.counts(ctx, activityID)
	return c.Waiting, c.Admitted, err
}
