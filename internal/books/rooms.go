package books

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

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
	a, err := s.catalog.Fresh(ctx, id)
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
	a.WaitingRoom = w
	if err := a.Validate(); err != nil {
		return seckill.ActivityView{}, err
	}
	return s.storeRoom(ctx, id, w)
}

// RemoveWaitingRoom takes the activity's waiting room away: everyone may buy
// again as without one.
func (s *Service) RemoveWaitingRoom(ctx context.Context, id int64) (seckill.ActivityView, error) {
	if _, err := s.catalog.Fresh(ctx, id); err != nil {
		return seckill.ActivityView{}, err
	}
	return s.storeRoom(ctx, id, nil)
}

// storeRoom writes the room to the database, then to Redis.
func (s *Service) storeRoom(ctx context.Context, id int64, w *seckill.WaitingRoom) (seckill.ActivityView, error) {
	a, err := s.orders.Activities.SetWaitingRoom(ctx, id, w)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		return seckill.ActivityView{}, seckill.NoActivity(id)
	case err != nil:
		return seckill.ActivityView{}, seckill.Unavailable("the order database did not answer; the waiting room is unchanged", err)
	}
	s.catalog.Put(a)
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

// Sold reports what the database holds of the activity: the units its
// orders keep (created and paid), the unpaid ones among them, and the total.
// A waiting room closes as sold out only when the orders hold every unit
// (none is in transit) and, with payments on, none is unpaid: then no unit
// can come back.
func (s *Service) Sold(ctx context.Context, activityID int64) (held, unpaid, total int64, err error) {
	a, err := s.catalog.Fresh(ctx, activityID)
	if err != nil {
		return 0, 0, 0, err
	}
	counts, err := s.orders.Orders.CountByStatus(ctx, activityID)
	if err != nil {
		return 0, 0, 0, err
	}
	unpaid = counts[seckill.OrderStatusCreated]
	return unpaid + counts[seckill.OrderStatusPaid], unpaid, a.TotalStock, nil
}
