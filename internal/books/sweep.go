package books

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// The books sweep: what makes the books balance again after a crash with
// nobody running reconcile.
//
// A process killed between two steps leaves Redis's stock off from
// total - sold: after a batch's deduct and before its order write, units
// stay deducted for orders that never existed; after an expiry's commit and
// before its unit's return, the unit never comes back; a settle that never
// ran keeps units of orders a unique key refused. Every such unit is in a
// durable record already: the database's activities.sold, which every order
// write and expiry moves in its own transaction, is the truth, and Redis's
// stock must equal total - sold whenever no batch is between its deduct and
// its commit.
//
// So every instance, every BooksSweep (with jitter), reads the books of the
// open activities (one query) and their stock (one read each). An activity
// whose stock is off from total - sold in two sweeps running is repaired by
// Reconcile, the same code path as `seckill reconcile`: under the
// activity's lock, with a fence claimed in the database in the same
// transaction that reads sold under the row's lock, and a load that lands
// only while the grant holds. A live batch between its deduct and its commit
// is what a single look sees most of the time in a hot sale; it holds the
// lock, so the repair waits for it and then finds nothing to do. A batch of a
// dead process whose COMMIT lands late is refused by the fence. A late settle
// or expiry return is refused by the stock's epoch, which the load moves. So
// a repair never returns a unit whose order committed: nothing is sold twice.
func (s *Service) sweepBooks() {
	defer s.sweeping.Done()
	suspects := make(map[int64]bool)
	for {
		// Jitter spreads the instances' sweeps apart.
		wait := s.cfg.BooksSweep/2 + rand.N(s.cfg.BooksSweep)
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		suspects = s.sweepOnce(suspects)
	}
}

// sweepOnce checks every open activity's books and repairs those seen off
// in the sweep before too; it returns the activities seen off now.
func (s *Service) sweepOnce(suspects map[int64]bool) map[int64]bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.BooksSweep+s.cfg.Lease.Wait+2*s.cfg.Lease.TTL)
	defer cancel()
	books, err := s.orders.Activities.OpenBooks(ctx, s.now().Add(-s.cfg.BooksAfterEnd))
	if err != nil {
		s.log.Warn("books sweep: activities not read", "err", err)
		return suspects
	}
	off := make(map[int64]bool)
	for _, b := range books {
		s.restoreRoom(ctx, b.ActivityID)
		if !s.booksOff(ctx, b) {
			continue
		}
		off[b.ActivityID] = true
		if suspects[b.ActivityID] {
			s.repair(ctx, b.ActivityID)
		}
	}
	return off
}

// booksOff reports whether the activity's stock in Redis is not total - sold
// right now (a look-up that fails says no: the next sweep looks again).
func (s *Service) booksOff(ctx context.Context, b order.Books) bool {
	left, err := s.stock.Remaining(ctx, b.ActivityID)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		return true
	case err != nil:
		return false
	}
	return left != b.TotalStock-b.Sold
}

// repair reconciles the activity and accounts for what it changed.
func (s *Service) repair(ctx context.Context, activityID int64) {
	r, err := s.Reconcile(ctx, activityID)
	if err != nil {
		s.log.Warn("books sweep: repair postponed", "activity_id", activityID, "err", err)
		return
	}
	if !r.Changed {
		return
	}
	reason, units := repairRedisLow, r.After-r.Before
	switch {
	case r.Before < 0:
		reason, units = repairNotLoaded, r.After
	case units < 0:
		reason, units = repairRedisHigh, -units
	}
	s.m.repaired.WithLabelValues(reason).Add(float64(units))
	s.log.Warn("books repaired", "activity_id", activityID, "fence", r.Fence, "reason", reason,
		"units", units, "redis_before", r.LoadedBefore(), "redis_after", r.After, "sold", r.Orders, "total", r.TotalStock)
}

// restoreRoom writes the activity's waiting room to Redis again when the
// database has one and Redis lost it: until then the room fails closed.
func (s *Service) restoreRoom(ctx context.Context, activityID int64) {
	a, err := s.catalog.Activity(ctx, activityID)
	if err != nil || a.WaitingRoom == nil {
		return
	}
	if _, err := s.rooms.Restore(ctx, a); err != nil {
		s.log.Warn("books sweep: waiting room not restored", "activity_id", activityID, "err", err)
	}
}
