package purchase

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Rooms are the activities' waiting rooms (internal/waitingroom) as the
// purchase path meets them: it asks whether a buyer is admitted, and uses
// admissions up with the buyers' final answers. The deduct checks the
// admission again, atomically; these calls only keep a buyer without one
// out of the queue and the lock.
type Rooms interface {
	// On reports, from memory, whether the activity has a room turned on.
	On(activityID int64) bool
	// Admitted reports whether the user holds an open admission; an
	// admitted user counts as seen (the idle lapse) for busy more.
	Admitted(ctx context.Context, activityID, userID int64, busy time.Duration) (admitted, on bool, err error)
	// Finish uses up admissions: orders maps a user to the order they
	// hold, refused to the code of a final refusal.
	Finish(ctx context.Context, activityID int64, orders, refused map[int64]string)
}

// noRooms is Rooms when the service has none.
type noRooms struct{}

func (noRooms) On(int64) bool { return false }
func (noRooms) Admitted(context.Context, int64, int64, time.Duration) (bool, bool, error) {
	return false, false, nil
}
func (noRooms) Finish(context.Context, int64, map[int64]string, map[int64]string) {}

// hasRoom reports whether purchases of a may need an admission.
func hasRoom(rooms Rooms, a seckill.Activity) bool {
	return a.WaitingRoom != nil || rooms.On(a.ID)
}

// refuseUnadmitted answers a buyer of an activity with a waiting room who
// holds no open admission: not_admitted, or paused or ended when the
// admission's read sees ops' stop (on every instance, from the stop's
// answer on). ok is false when the buyer may go on.
func (s *Service) refuseUnadmitted(ctx context.Context, a seckill.Activity, userID int64) (err error, ok bool) {
	if !hasRoom(s.rooms, a) {
		return nil, false
	}
	admitted, on, err := s.rooms.Admitted(ctx, a.ID, userID, s.cfg.flightLimit())
	switch {
	case errors.Is(err, stock.ErrPaused):
		// Not marked: the admission's read sees a resume elsewhere at once.
		return seckill.SalePaused(), true
	case errors.Is(err, stock.ErrEnded):
		return endedOf(s.catalog, a), true
	case errors.Is(err, seckill.ErrRoomLost) && a.WaitingRoom == nil:
		// Neither the database (as cached) nor Redis has a room.
		return nil, false
	case errors.Is(err, seckill.ErrRoomLost):
		// The room fails closed, never open (docs/API.md "Waiting room
		// limits").
		return seckill.Unavailable("the waiting room is being restored after Redis lost it; nothing was sold: try again in a few seconds", err), true
	case err != nil:
		return seckill.Unavailable("the waiting room did not answer; nothing was sold", err), true
	case !on:
		return nil, false
	case admitted:
		// One admission, one unit: an earlier batch of the buyer's whose
		// outcome was unknown is resolved first (unknown.go).
		if err := s.sell.resolveEarlier(ctx, a, userID); err != nil {
			return err, true
		}
		return nil, false
	}
	return notAdmitted(), true
}

// seenAfterRetry records an admitted buyer as seen again when their purchase
// ends with an answer to try again (429, 503): they waited in it up to the
// queue's wait, without polling, and are present; the idle lapse
// (SECKILL_ADMISSION_IDLE) must not take their admission for that wait.
func (s *Service) seenAfterRetry(ctx context.Context, a seckill.Activity, userID int64, err error) {
	if e, ok := errors.AsType[*seckill.Error](err); !hasRoom(s.rooms, a) || !ok || !e.Retryable() {
		return
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_, _, _ = s.rooms.Admitted(tctx, a.ID, userID, 0) // it records the buyer seen when admitted
}

// flightLimit is the longest a purchase takes from its admission check to
// its deduct: the queue's wait, the lock's, and a lease's worth of user
// checks and Redis calls. The buyer is busy buying meanwhile, not gone.
func (cfg Config) flightLimit() time.Duration {
	return 2*cfg.Lease.Wait + cfg.Lease.TTL
}

func notAdmitted() *seckill.Error {
	return seckill.Errorf(seckill.ENotAdmitted, "this sale has a waiting room: join the queue (POST .../queue) and buy once admitted; an admission not used in time lapses, and joining again then puts you at the back")
}

// finishAdmissions uses up the admissions of a batch's buyers with a final
// answer: an order (theirs, or the one they already hold), or the user
// check's refusal.
func (p *seller) finishAdmissions(b *batch) {
	if !hasRoom(p.rooms, b.activity) {
		return
	}
	orders, refused := map[int64]string{}, map[int64]string{}
	for i, t := range b.tickets {
		out := b.outs[i]
		var e *seckill.Error
		switch {
		case out.err == nil && out.order.ID != "":
			orders[t.req.UserID] = out.order.ID
		case errors.As(out.err, &e) && e.Code == seckill.EAlreadyPurchased && e.OrderID != "":
			orders[t.req.UserID] = e.OrderID
		case errors.As(out.err, &e) && e.Code == seckill.EUserRejected:
			refused[t.req.UserID] = e.Code
		}
	}
	if len(orders)+len(refused) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	p.rooms.Finish(ctx, b.activity.ID, orders, refused)
}

// HeldOrder returns the order the user holds in the activity, if any, for a
// waiting room's join (a holder gets no place). inBuyers is whether the
// activity's buyer set holds the user, as the room's own read of it just
// said: the buyer set is not read again (a join is a storm at a room's
// opening; a round trip each cost it more than the rest of the join). Only
// a user this process saw buy, or in the buyer set, costs a database read.
func (s *Service) HeldOrder(ctx context.Context, activityID, userID int64, inBuyers bool) (seckill.Order, bool) {
	if _, seen := s.bought.orderOf(activityID, userID); !seen && !inBuyers {
		return seckill.Order{}, false
	}
	o, ok := s.holders.held(ctx, activityID, []int64{userID})[userID]
	return o, ok
}
