package purchase

import (
	"context"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
)

// pausedMarks remembers activities whose deduct answered "paused" (ops
// paused the sale: docs/API.md "Stopping a sale"), and when, so a paused
// sale's storm costs no queue slot, user check or Redis round trip. Only a
// refusal comes from a mark, never a sale: the deduct checks the flag
// itself, atomically. A mark is trusted for soldOutRecheck: another
// instance's resume is seen here at most that much later; this instance's
// resume clears it at once (SaleStopped).
type pausedMarks struct {
	at sync.Map // int64 -> time.Time
}

// fresh reports whether the activity was seen paused less than
// soldOutRecheck before now.
func (m *pausedMarks) fresh(activityID int64, now time.Time) bool {
	at, ok := m.at.Load(activityID)
	return ok && now.Sub(at.(time.Time)) < soldOutRecheck
}

// SaleStopped records that ops paused (paused) or resumed the activity's
// sale on this instance (books.Sales).
func (s *Service) SaleStopped(activityID int64, paused bool) {
	if paused {
		s.paused.at.Store(activityID, s.now())
		return
	}
	s.paused.at.Delete(activityID)
}

// refusePaused answers a buyer of an activity this instance saw paused a
// moment ago: paused. A repeat with an Idempotency-Key goes on, to get its
// order again if it has one (the deduct refuses it otherwise).
func (s *Service) refusePaused(a seckill.Activity, req seckill.BuyRequest, now time.Time) (error, bool) {
	if req.IdempotencyKey != "" || !s.paused.fresh(a.ID, now) {
		return nil, false
	}
	return seckill.SalePaused(), true
}

// stoppedByOps is the answer to a batch whose deduct met a stopped sale:
// paused (and marked so here), or ended, in which case the activity is read
// again so this instance's window learns ops' end.
func (p *seller) stoppedByOps(a seckill.Activity, ended bool) error {
	if !ended {
		p.paused.at.Store(a.ID, p.now())
		p.m.batches.WithLabelValues("paused").Inc()
		return seckill.SalePaused()
	}
	p.m.batches.WithLabelValues("ended").Inc()
	return endedOf(p.catalog, a)
}

// endedOf is the answer to a buyer of an activity ops ended, possibly on
// another instance: the activity is read again so this instance's window
// learns ops' end (and the answer names the new ends_at).
func endedOf(cat *catalog.Catalog, a seckill.Activity) error {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	if fresh, err := cat.Fresh(ctx, a.ID); err == nil {
		a = fresh
	}
	return seckill.Ended(a)
}

// notStarted answers a buyer before the start: not_started, unless ops
// ended the sale before its start on another instance, which here only
// Redis's flag says until the activity is read again (it is, then). No
// deduct runs before the start to meet the flag, hence the read.
func (s *Service) notStarted(ctx context.Context, a seckill.Activity) error {
	ended, err := s.stock.Ended(ctx, a.ID)
	if err != nil {
		s.log.DebugContext(ctx, "ended flag not read; answered not_started", "activity_id", a.ID, "err", err)
	}
	if !ended {
		return seckill.Errorf(seckill.ENotStarted, "the sale starts at %s", a.StartsAt.UTC().Format(time.RFC3339))
	}
	return endedOf(s.catalog, a)
}
