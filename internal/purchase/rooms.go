package purchase

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// Rooms are the activities' waiting rooms (internal/waitingroom) as the
// purchase path meets them: it asks whether a buyer is admitted, and uses
// admissions up with the buyers' final answers. The deduct checks the
// admission again, atomically; these calls only keep a buyer without one
// out of the queue and the lock.
type Rooms interface {
	// On reports, from memory, whether the activity has a room turned on.
	On(activityID int64) bool
	Admitted(ctx context.Context, activityID, userID int64) (admitted, on bool, err error)
	// Finish uses up admissions: orders maps a user to the order they
	// hold, refused to the code of a final refusal.
	Finish(ctx context.Context, activityID int64, orders, refused map[int64]string)
	// Open writes the activity's room to Redis (turned on); Shut turns it off.
	Open(ctx context.Context, a seckill.Activity) error
	Shut(ctx context.Context, activityID int64) error
	// Sizes returns the places not yet admitted and the admissions open.
	Sizes(ctx context.Context, activityID int64) (waiting, admitted int64, err error)
}

// noRooms is Rooms when the service has none.
type noRooms struct{}

func (noRooms) On(int64) bool { return false }
func (noRooms) Admitted(context.Context, int64, int64) (bool, bool, error) {
	return false, false, nil
}
func (noRooms) Finish(context.Context, int64, map[int64]string, map[int64]string) {}
func (noRooms) Open(context.Context, seckill.Activity) error                      { return nil }
func (noRooms) Shut(context.Context, int64) error                                 { return nil }
func (noRooms) Sizes(context.Context, int64) (int64, int64, error)                { return 0, 0, nil }

// hasRoom reports whether purchases of a may need an admission.
func (s *Service) hasRoom(a seckill.Activity) bool {
	return a.WaitingRoom != nil || s.rooms.On(a.ID)
}

// refuseUnadmitted answers a buyer of an activity with a waiting room who
// holds no open admission: not_admitted, or already_purchased for a holder.
// ok is false when the buyer may go on.
func (s *Service) refuseUnadmitted(ctx context.Context, a seckill.Activity, userID int64) (err error, ok bool) {
	if !s.hasRoom(a) {
		return nil, false
	}
	admitted, on, err := s.rooms.Admitted(ctx, a.ID, userID)
	switch {
	case err != nil:
		return seckill.Unavailable("the waiting room did not answer; nothing was sold", err), true
	case !on || admitted:
		return nil, false
	}
	return s.holderOr(ctx, a.ID, userID, notAdmitted()), true
}

func notAdmitted() *seckill.Error {
	return seckill.Errorf(seckill.ENotAdmitted, "this sale has a waiting room: join the queue (POST .../queue) and buy once admitted")
}

// finishAdmissions uses up the admissions of a batch's buyers with a final
// answer: an order (theirs, or the one they already hold), or the user
// check's refusal.
func (s *Service) finishAdmissions(b *batch) {
	if !s.hasRoom(b.activity) {
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
	s.rooms.Finish(ctx, b.activity.ID, orders, refused)
}

// roomView is the activity's room with its sizes; nil without a room. Sizes
// Redis cannot give are shown as 0.
func (s *Service) roomView(ctx context.Context, a seckill.Activity) *seckill.RoomView {
	if a.WaitingRoom == nil {
		return nil
	}
	v := &seckill.RoomView{OpensAt: a.WaitingRoom.OpensAt}
	if w, n, err := s.rooms.Sizes(ctx, a.ID); err == nil {
		v.Waiting, v.Admitted = w, n
	}
	return v
}

// SetWaitingRoom gives the activity a waiting room opening at opensAt (zero:
// DefaultWaitingRoomLead before the start), or moves its opening, before
// the sale starts: already_started after. The draw's seed is made once and
// kept.
func (s *Service) SetWaitingRoom(ctx context.Context, id int64, opensAt time.Time) (seckill.ActivityView, error) {
	a, err := s.freshActivity(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	if !s.now().Before(a.StartsAt) {
		return seckill.ActivityView{}, seckill.Errorf(seckill.EAlreadyStarted, "the sale started at %s; a waiting room can only be turned on before", a.StartsAt.UTC().Format(time.RFC3339))
	}
	w, err := NewWaitingRoom(a.StartsAt, opensAt)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	if a.WaitingRoom != nil {
		w.Seed = a.WaitingRoom.Seed
	}
	return s.storeRoom(ctx, id, w)
}

// RemoveWaitingRoom takes the activity's waiting room away: everyone may buy
// again as without one.
func (s *Service) RemoveWaitingRoom(ctx context.Context, id int64) (seckill.ActivityView, error) {
	if _, err := s.freshActivity(ctx, id); err != nil {
		return seckill.ActivityView{}, err
	}
	return s.storeRoom(ctx, id, nil)
}

// storeRoom writes the room to the database, then to Redis.
func (s *Service) storeRoom(ctx context.Context, id int64, w *seckill.WaitingRoom) (seckill.ActivityView, error) {
	a, err := s.orders.SetWaitingRoom(ctx, id, w)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		return seckill.ActivityView{}, activityNotFound(id)
	case err != nil:
		return seckill.ActivityView{}, seckill.Unavailable("the order database did not answer; the waiting room is unchanged", err)
	}
	s.activities.put(a)
	if w == nil {
		err = s.rooms.Shut(ctx, id)
	} else {
		err = s.rooms.Open(ctx, a)
	}
	if err != nil {
		// The database has it; a reconcile writes it to Redis again.
		return seckill.ActivityView{}, seckill.Unavailable("Redis did not answer; the waiting room is stored but not in effect: retry, or reconcile the activity", err)
	}
	s.log.InfoContext(ctx, "waiting room changed", "activity_id", id, "on", w != nil)
	return s.Activity(ctx, id)
}

// NewWaitingRoom is a room opening at opensAt (zero: DefaultWaitingRoomLead
// before startsAt) with a fresh seed for its draw.
func NewWaitingRoom(startsAt, opensAt time.Time) (*seckill.WaitingRoom, error) {
	if opensAt.IsZero() {
		opensAt = startsAt.Add(-seckill.DefaultWaitingRoomLead)
	}
	if opensAt.After(startsAt) {
		return nil, seckill.Errorf(seckill.EInvalid, "waiting_room.opens_at must be at or before starts_at")
	}
	var seed [16]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, seckill.Errorf(seckill.EInternal, "no randomness for the draw's seed: %v", err)
	}
	return &seckill.WaitingRoom{OpensAt: opensAt.UTC(), Seed: hex.EncodeToString(seed[:])}, nil
}

// HeldOrder returns the order the user holds in the activity, if any, for a
// waiting room's join (a holder gets no place). Only a user this process saw
// buy, or in the activity's buyer set, costs a database read.
func (s *Service) HeldOrder(ctx context.Context, activityID, userID int64) (seckill.Order, bool) {
	o, ok := s.heldOrders(ctx, activityID, []int64{userID})[userID]
	return o, ok
}

// Sold reports what the database holds of the activity: the units its
// orders keep (created and paid), the unpaid ones among them, and the total.
// A waiting room closes as sold out only when the orders hold every unit
// (none is in transit) and, with payments on, none is unpaid: then no unit
// can come back.
func (s *Service) Sold(ctx context.Context, activityID int64) (held, unpaid, total int64, err error) {
	a, err := s.freshActivity(ctx, activityID)
	if err != nil {
		return 0, 0, 0, err
	}
	counts, err := s.orders.CountByStatus(ctx, activityID)
	if err != nil {
		return 0, 0, 0, err
	}
	unpaid = counts[seckill.OrderStatusCreated]
	return unpaid + counts[seckill.OrderStatusPaid], unpaid, a.TotalStock, nil
}
