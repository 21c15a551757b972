package books

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Activity returns the activity and what is left of it. Remaining stock
// comes from Redis; when Redis has none loaded or does not answer, it is
// computed from the database.
func (s *Service) Activity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.catalog.Activity(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	return s.view(ctx, a)
}

// BuyerActivity is Activity as a buyer may see it: an unannounced activity
// is activity_not_found until its start.
func (s *Service) BuyerActivity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.catalog.Visible(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	return s.view(ctx, a)
}

// view is the activity with its live stock and room.
func (s *Service) view(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	remaining, stop, err := s.stock.RemainingStop(ctx, a.ID)
	if stop.Ended && s.now().Before(a.EndsAt) {
		a = s.endedElsewhere(ctx, a)
	}
	paused := stop.Paused
	if err != nil {
		paused = paused || !a.PausedAt.IsZero()
		_, units, cerr := s.orders.Orders.CountHeld(ctx, a.ID)
		if cerr != nil {
			return seckill.ActivityView{}, seckill.Unavailable("neither Redis nor the database answered", errors.Join(err, cerr))
		}
		remaining = max(a.TotalStock-units, 0)
	}
	status := a.StatusAt(s.now(), remaining)
	if stop.Ended {
		status = seckill.StatusEnded
	}
	return seckill.ActivityView{Activity: a, Remaining: remaining, Status: status, Room: s.roomView(ctx, a),
		Paused: paused}, nil
}

// CreateActivity validates and stores a new activity and loads its stock
// into Redis. A failure to load leaves the activity created; preloading it
// later is safe.
func (s *Service) CreateActivity(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	if err := a.Validate(); err != nil {
		return seckill.ActivityView{}, err
	}
	if err := s.cfg.priceRequired(a.PriceMinor); err != nil {
		return seckill.ActivityView{}, err
	}
	a.StartsAt, a.EndsAt = a.StartsAt.UTC(), a.EndsAt.UTC()
	if a.WaitingRoom != nil {
		w, err := NewWaitingRoom(a.StartsAt, a.WaitingRoom.OpensAt)
		if err != nil {
			return seckill.ActivityView{}, err
		}
		a.WaitingRoom = w
	}
	created, err := s.orders.Activities.CreateActivity(ctx, a)
	if err != nil {
		return seckill.ActivityView{}, seckill.Unavailable("the order database failed; the activity was not created", err)
	}
	s.catalog.Put(created)
	if _, err := s.Reconcile(ctx, created.ID); err != nil {
		s.log.WarnContext(ctx, "stock of new activity not loaded; preload it", "activity_id", created.ID, "err", err)
	}
	return seckill.ActivityView{Activity: created, Remaining: created.TotalStock, Status: created.StatusAt(s.now(), created.TotalStock),
		Room: s.roomView(ctx, created)}, nil
}

// Preload loads the activity's stock into Redis as total_stock minus the
// orders in the database. It is safe at any time: see Reconcile.
func (s *Service) Preload(ctx context.Context, id int64) (remaining int64, err error) {
	r, err := s.Reconcile(ctx, id)
	return r.After, err
}

// Audit reports whether the activity's books balance.
func (s *Service) Audit(ctx context.Context, id int64) (seckill.Audit, error) {
	a, err := s.catalog.Fresh(ctx, id) // the total may have been adjusted elsewhere
	if err != nil {
		return seckill.Audit{}, err
	}
	n, units, err := s.orders.Orders.CountHeld(ctx, id)
	if err != nil {
		return seckill.Audit{}, seckill.DatabaseDown(err)
	}
	remaining, err := s.stock.Remaining(ctx, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		remaining = 0 // with no stock in Redis, the orders alone must make the total
	case err != nil:
		return seckill.Audit{}, seckill.RedisDown(err)
	}
	b := seckill.Books{ActivityID: id, TotalStock: a.TotalStock, Held: units, RedisRemaining: remaining, RedisLoaded: true}
	out := seckill.Audit{
		ActivityID:     id,
		TotalStock:     a.TotalStock,
		Orders:         n,
		Units:          units,
		RedisRemaining: remaining,
		Oversold:       b.Oversold() > 0,
		Consistent:     b.Imbalance() == 0,
	}
	if out.EventsPending, err = s.orders.Outbox.PendingEventsOf(ctx, id); err != nil {
		return seckill.Audit{}, seckill.DatabaseDown(err)
	}
	if a.WaitingRoom != nil {
		if _, open, err := s.rooms.Sizes(ctx, id); err == nil {
			out.AdmittedOpen = open
		}
		if !s.now().Before(a.StartsAt) {
			out.DrawSeed = a.WaitingRoom.Seed
		}
	}
	return out, nil
}
