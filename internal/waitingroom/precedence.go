package waitingroom

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// queueAsk is a join or a queue/mine as its checks see it: the activity,
// the caller, and their standing as read before the checks.
type queueAsk struct {
	a      seckill.Activity
	userID int64
	st     standing
}

// queueCheck answers the ask (done) or lets it go on to the next check.
type queueCheck func(ctx context.Context, r *Room, q *queueAsk) (seckill.QueueStatus, error, bool)

// joinChecks are a join's checks before it asks for a place, in the
// contract's order (seckill.Precedence); join.lua checks the room's own
// again, with the place.
var joinChecks = seckill.Checks(seckill.RouteJoin, map[string]queueCheck{
	"room_lost": roomLostCheck,
	// A lapsed user joins again, at the back; any other place is kept,
	// and answered, but for a pause.
	"place": func(ctx context.Context, r *Room, q *queueAsk) (seckill.QueueStatus, error, bool) {
		switch {
		case !q.st.hasPlace() || q.st.lapsedOnly():
			return seckill.QueueStatus{}, nil, false
		case q.st.pausedPlace():
			return seckill.QueueStatus{}, seckill.SalePaused(), true
		}
		status, err := r.status(ctx, q.a.ID, q.userID, q.st)
		return status, err, true
	},
	"no_waiting_room": refuseIf(func(q *queueAsk) error { return noWaitingRoom(q.a.ID) }, func(q *queueAsk) bool { return !q.st.on }),
	"not_open":        refuseIf(func(q *queueAsk) error { return notOpenYet(q.st.opens) }, func(q *queueAsk) bool { return q.st.now.Before(q.st.opens) }),
	"ended_before_holder": refuseIf(func(q *queueAsk) error { return seckill.Ended(q.a) },
		func(q *queueAsk) bool { return !q.st.now.Before(q.st.ends) }),
	"already_purchased": func(ctx context.Context, r *Room, q *queueAsk) (seckill.QueueStatus, error, bool) {
		if r.deps.Holder == nil {
			return seckill.QueueStatus{}, nil, false
		}
		o, ok := r.deps.Holder(ctx, q.a.ID, q.userID, q.st.buyer)
		if !ok {
			return seckill.QueueStatus{}, nil, false
		}
		return seckill.QueueStatus{}, seckill.Holds(o), true
	},
	// The pause read with the standing, fresh: a join after the pause's
	// answer, on any instance, gets no place (join.lua checks it again,
	// with the place).
	"paused": refuseIf(func(*queueAsk) error { return seckill.SalePaused() }, func(q *queueAsk) bool { return q.st.paused }),
	"room_closed": refuseIf(func(q *queueAsk) error {
		if q.st.closed == isEnded {
			return seckill.Ended(q.a)
		}
		return soldOut()
	}, func(q *queueAsk) bool { return q.st.closed != "" }),
	"user_rejected": func(ctx context.Context, r *Room, q *queueAsk) (seckill.QueueStatus, error, bool) {
		if r.deps.Verify == nil {
			return seckill.QueueStatus{}, nil, false
		}
		switch err := r.deps.Verify(ctx, q.userID, q.a.ID); {
		case errors.Is(err, usercheck.ErrRejected):
			return seckill.QueueStatus{}, &seckill.Error{Code: seckill.EUserRejected, Message: "the user-verification service rejected this user; no place was given", Err: err}, true
		case err != nil:
			e := seckill.Unavailable("the user-verification service failed or timed out; no place was given", err)
			e.RetryAfter = max(e.RetryAfter, usercheck.RetryAfter(err))
			return seckill.QueueStatus{}, e, true
		}
		return seckill.QueueStatus{}, nil, false
	},
})

// mineChecks are queue/mine's checks before it answers the caller's status.
var mineChecks = seckill.Checks(seckill.RouteMine, map[string]queueCheck{
	"room_lost": roomLostCheck,
	"not_in_queue": refuseIf(func(q *queueAsk) error {
		return seckill.Errorf(seckill.ENotInQueue, "you have no place in the waiting room of activity %d; join it first", q.a.ID)
	}, func(q *queueAsk) bool { return !q.st.hasPlace() }),
})

// roomLostCheck refuses while the database says the activity has a room
// and Redis lost it (failClosed).
func roomLostCheck(_ context.Context, _ *Room, q *queueAsk) (seckill.QueueStatus, error, bool) {
	err := failClosed(q.a, q.st)
	return seckill.QueueStatus{}, err, err != nil
}

// refuseIf is a check that answers refusal(q) when holds(q).
func refuseIf(refusal func(*queueAsk) error, holds func(*queueAsk) bool) queueCheck {
	return func(_ context.Context, _ *Room, q *queueAsk) (seckill.QueueStatus, error, bool) {
		if !holds(q) {
			return seckill.QueueStatus{}, nil, false
		}
		return seckill.QueueStatus{}, refusal(q), true
	}
}

// walk runs the checks in order; the first that answers is the answer.
func (r *Room) walk(ctx context.Context, checks []seckill.Named[queueCheck], q *queueAsk) (seckill.QueueStatus, error, bool) {
	for _, c := range checks {
		if status, err, done := c.Check(ctx, r, q); done {
			return status, err, true
		}
	}
	return seckill.QueueStatus{}, nil, false
}
