package books

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Stopping a sale (docs/API.md "Stopping a sale"): pause, resume and end.
// Each runs under the activity's lock, as a load does, so a reconcile
// (which writes the stop as the database has it, with the stock) never
// lands between the database's change and Redis's. Redis's flag is what
// every instance's deduct checks atomically (internal/stock/stop.go); this
// instance's caches learn it at once, another instance's refuse faster
// once its deduct met the flag.

// Pause stops the activity's sale on every instance from the answer on:
// Redis first, so a failure in between leaves the sale stopped, never
// selling while the answer says paused.
func (s *Service) Pause(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.catalog.Fresh(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	if !s.now().Before(a.EndsAt) {
		return seckill.ActivityView{}, seckill.Ended(a)
	}
	lk, release, err := s.hold(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	defer release()
	lease, at := lk.Context(), s.now()
	if !a.PausedAt.IsZero() {
		at = a.PausedAt // paused already: the pause keeps its start
	}
	if err := s.stock.Pause(lease, id, at); err != nil {
		return seckill.ActivityView{}, seckill.RedisDown(err)
	}
	if a, err = s.orders.Activities.SetPaused(lease, id, at); err != nil {
		return seckill.ActivityView{}, stopErr(id, err)
	}
	s.catalog.Put(a)
	s.sales.SaleStopped(id, true)
	s.log.InfoContext(ctx, "sale paused", "activity_id", id)
	return s.view(ctx, a)
}

// Resume undoes Pause: the database first, so a failure in between leaves
// the sale paused. The waiting room's open admissions move later by the
// pause's length, in the step that clears the flag.
func (s *Service) Resume(ctx context.Context, id int64) (seckill.ActivityView, error) {
	if _, err := s.catalog.Activity(ctx, id); err != nil {
		return seckill.ActivityView{}, err
	}
	lk, release, err := s.hold(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	defer release()
	lease := lk.Context()
	a, err := s.orders.Activities.SetPaused(lease, id, time.Time{})
	if err != nil {
		return seckill.ActivityView{}, stopErr(id, err)
	}
	paused, err := s.stock.Resume(lease, id)
	if err != nil {
		return seckill.ActivityView{}, seckill.RedisDown(err)
	}
	s.catalog.Put(a)
	s.sales.SaleStopped(id, false)
	s.log.InfoContext(ctx, "sale resumed", "activity_id", id, "paused", paused.String())
	return s.view(ctx, a)
}

// End ends the activity's sale now, before or during it: ends_at becomes
// now (and so does starts_at if it was later: an empty window, which every
// reload reads as ended), every instance's deduct and join refuse from the
// answer on, and the waiting room closes as ended. Orders keep their
// payment window. The database first: it is what a preload, a reconcile,
// a stock change and the books sweep write Redis's flag from, so a failure
// after it cannot revive the sale, and the Redis flag a retry writes (as
// any reload does) completes it. Ending an ended sale writes the flag again
// and changes nothing else.
func (s *Service) End(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.catalog.Fresh(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	now := s.now().UTC()
	if now.Before(a.EndsAt) {
		if a, err = s.endInDatabase(ctx, a, now); err != nil {
			return seckill.ActivityView{}, err
		}
	}
	if err := s.stock.End(ctx, id); err != nil {
		return seckill.ActivityView{}, seckill.Unavailable("the end is stored, but Redis did not answer, so purchases may go on: retry the end, or reconcile the activity", err)
	}
	return s.view(ctx, a)
}

// endInDatabase moves the activity's window to end at now, under its lock
// (no reconcile lands between), and closes its waiting room as ended.
func (s *Service) endInDatabase(ctx context.Context, a seckill.Activity, now time.Time) (seckill.Activity, error) {
	id := a.ID
	lk, release, err := s.hold(ctx, id)
	if err != nil {
		return seckill.Activity{}, err
	}
	defer release()
	lease := lk.Context()
	starts := a.StartsAt
	if starts.After(now) {
		starts = now
	}
	if a, err = s.orders.Activities.EndActivity(lease, id, starts, now); err != nil {
		if errors.Is(err, order.ErrActivityNotFound) {
			return seckill.Activity{}, seckill.NoActivity(id)
		}
		return seckill.Activity{}, seckill.Unavailable("the order database did not answer; the sale may not have ended: retry the end", err)
	}
	s.catalog.Put(a)
	if a.WaitingRoom != nil {
		// The room's end moves to now: its admitter closes it as ended.
		if err := s.rooms.Open(lease, a); err != nil {
			s.log.WarnContext(ctx, "waiting room's end not written to Redis; joins are refused by the stock's flag, and it closes at the old end", "activity_id", id, "err", err)
		}
	}
	s.log.InfoContext(ctx, "sale ended", "activity_id", id, "before_start", starts.Equal(now))
	return a, nil
}

// endedElsewhere is the activity read again when Redis's flag says ops
// ended it and this instance's copy still has it open: ended on another
// instance. The copy stays when the database does not answer.
func (s *Service) endedElsewhere(ctx context.Context, a seckill.Activity) seckill.Activity {
	fresh, err := s.catalog.Fresh(ctx, a.ID)
	if err != nil {
		s.log.WarnContext(ctx, "activity ended elsewhere not read again", "activity_id", a.ID, "err", err)
		return a
	}
	return fresh
}

// haltOf is the activity's stop, at now, as a load writes it.
func haltOf(a seckill.Activity, now time.Time) stock.Halt {
	return stock.Halt{PausedAt: a.PausedAt, Ended: !now.Before(a.EndsAt)}
}

// stopErr maps the database's refusal of a stop.
func stopErr(id int64, err error) error {
	if errors.Is(err, order.ErrActivityNotFound) {
		return seckill.NoActivity(id)
	}
	return seckill.Unavailable("the order database did not answer; the sale's state is as before", err)
}
