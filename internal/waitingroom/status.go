package waitingroom

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/seckill-oss/seckill"
)

// A buyer's standing as they see it (queue/mine, a join's answer), and the
// cadence of their polls: when to come back, and when they may be in.

// Mine returns the user's standing in the activity's room.
func (r *Room) Mine(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error) {
	q, _, err := r.mine(ctx, activityID, userID, false)
	return q, err
}

// mine is Mine with the standing it read; a read that goes first is read
// ahead of the room's ordinary reads waiting.
func (r *Room) mine(ctx context.Context, activityID, userID int64, first bool) (seckill.QueueStatus, standing, error) {
	a, err := r.deps.Activity(ctx, activityID)
	if err != nil {
		return seckill.QueueStatus{}, standing{}, err
	}
	st, err := r.st.readStanding(ctx, activityID, userID, first)
	if err != nil {
		return seckill.QueueStatus{}, standing{}, unavailable(err)
	}
	if q, err, done := r.walk(ctx, mineChecks, &queueAsk{a: a, userID: userID, st: st}); done {
		return q, st, err
	}
	q, err := r.status(ctx, activityID, userID, st)
	return q, st, err
}

// MineWait is Mine held, for at most wait, while the user's state is
// prequeue or waiting (docs/API.md "Waiting for a change"): it answers
// once the state changes (the draw placed a pre-queue member, the user is
// admitted, the room closed), wait passed, or this instance stops; past
// SECKILL_ROOM_MAX_HELD held requests it answers at once.
func (r *Room) MineWait(ctx context.Context, activityID, userID int64, wait time.Duration) (seckill.QueueStatus, error) {
	h := r.holds.add(activityID, userID) //nolint:contextcheck // the room's watch outlives this request: it runs on the holds' own context, which their stop ends
	if h == nil {
		return r.Mine(ctx, activityID, userID)
	}
	defer r.holds.remove(h)
	deadline := time.Now().Add(wait)
	h.ready(ctx, r.holds, deadline)
	held := ""
	// A holder a note woke reads first: the admission or the closing it
	// tells of is news; a timer's end, at the draw the whole crowd's, is not.
	woken := wokenByTime
	for waited := false; ; waited = true {
		var (
			q   seckill.QueueStatus
			st  standing
			err error
		)
		if waited {
			// A read after a wait mostly ends the hold (the state changed,
			// S passed): the stack it grows is given back with the goroutine.
			q, st, err = r.mine(ctx, activityID, userID, woken == wokenByNote)
		} else {
			q, st, err = r.mineApart(ctx, activityID, userID)
		}
		until := deadline
		if q.State == seckill.QueuePrequeue {
			// The draw places the pre-queue at the start, by Redis's
			// clock: no note tells of it.
			if draw := time.Now().Add(max(st.starts.Sub(st.now), time.Millisecond)); draw.Before(until) {
				until = draw
			}
		}
		if held == "" && (q.State == seckill.QueuePrequeue || q.State == seckill.QueueWaiting) {
			held = q.State // held while the state is the one first read
		}
		if err != nil || q.State != held || !time.Now().Before(until) || r.holds.stopping() {
			return q, err
		}
		if woken = h.wait(ctx, r.holds, until); woken == wokenByGone {
			return q, nil
		}
	}
}

// mineApart is mine on a goroutine of its own, which the caller waits
// for: the read before a hold's first wait. A held request's goroutine
// waits up to 30 s, and its stack is most of what it costs meanwhile
// (loadtest/RESULTS.md, "A held request within 8 KB of stack"): a status
// read reaches 2-4 KB deeper than the hold's wait, and made on the
// handler's goroutine it grew each held stack from 8 to 16 KB, which GC
// does not shrink while the goroutine waits half-way up. The read's
// goroutine ends with the read; a panic in it is the caller's.
func (r *Room) mineApart(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, standing, error) {
	type read struct {
		q        seckill.QueueStatus
		st       standing
		err      error
		panicked any
	}
	done := make(chan read, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- read{panicked: p}
			}
		}()
		q, st, err := r.mine(ctx, activityID, userID, false) // nothing woke it: an ordinary read
		done <- read{q: q, st: st, err: err}
	}()
	rd := <-done
	if rd.panicked != nil {
		panic(rd.panicked)
	}
	return rd.q, rd.st, rd.err
}

// ReleaseHolds answers every held request at once with its current status,
// answers later ones at once, and stops the rooms' watches: the shutdown's
// first step, so no held request keeps the server waiting.
func (r *Room) ReleaseHolds() { r.holds.stop() }

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
	case st.heldByPause():
		// Its end as the resume will set it were the sale resumed now.
		q.State = seckill.QueueAdmitted
		q.AdmittedUntil = time.UnixMilli(st.until + max(st.now.UnixMilli()-st.pausedAt, 0)).UTC()
		q.Refresh = time.Second
		r.touch(ctx, activityID, userID, 0)
	case st.until > st.now.UnixMilli():
		q.State, q.AdmittedUntil = seckill.QueueAdmitted, time.UnixMilli(st.until).UTC()
		q.Refresh = time.Second
		r.touch(ctx, activityID, userID, 0)
	case st.end == "l" || st.until >= 0:
		q.State = seckill.QueueLapsed
		if st.buyer && r.deps.Holder != nil {
			// The purchase's end was not written (Redis failed then):
			// the buyer set says they may hold an order.
			if o, ok := r.deps.Holder(ctx, activityID, userID, true); ok {
				r.Finish(ctx, activityID, map[int64]string{userID: o.ID}, nil)
				q.State, q.OrderID = seckill.QueueDone, o.ID
			}
		}
		if q.State == seckill.QueueLapsed && st.closed != "" {
			// Lapsed invites joining again, which a closed room refuses.
			q.State, q.Reason = seckill.QueueClosed, st.closed
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
	if q.State == seckill.QueuePrequeue || q.State == seckill.QueueWaiting {
		r.expect(ctx, activityID, userID, q.Refresh)
	}
	return q, nil
}

// expect records, when admissions lapse on idleness, when a user in line was
// told to come back: an admission given before then must not lapse as idle
// before they were due. A failure only risks that early lapse.
func (r *Room) expect(ctx context.Context, activityID, userID int64, refresh time.Duration) {
	if r.cfg.AdmissionIdle <= 0 {
		return
	}
	if err := r.st.due(ctx, activityID, userID, refresh); err != nil {
		r.log.DebugContext(ctx, "the poll's due time not recorded", "activity_id", activityID, "err", err)
	}
}

// eta estimates the time until a waiting user at st is admitted. The
// places within the units no admission holds come in at the pace the
// admitter allows; the places behind them wait for units to come back
// (purchases, lapses, expiries), at the measured admission rate. None while
// no unit is left (a unit may or may not come back), while open admissions
// hold every unit left (whether they are used or lapse, and when, nobody
// knows: the rate of the admissions before says nothing of it; a room of
// 400 users and 40 units had no estimate within ±50% this way), or when
// nothing was admitted lately.
func eta(st standing) (time.Duration, bool) {
	position := float64(st.rank + 1)
	// Places, not units: each admission holds st.hold units.
	hold := max(st.hold, 1)
	free := float64((st.remain - st.admitted*hold) / hold)
	var s float64
	switch {
	case st.remain <= 0 || free <= 0:
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

// jitter spreads a refresh by up to a fifth, so a crowd told the same
// refresh does not come back in step.
func jitter(d time.Duration) time.Duration {
	if d <= time.Second {
		return d
	}
	return d + time.Duration(rand.Int64N(int64(d/5))) //nolint:gosec // G404: spreading polls needs no secret randomness
}
