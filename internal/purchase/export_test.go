package purchase

import (
	"context"
	"sync/atomic"

	"github.com/seckill-oss/seckill"
)

// Queued returns how many buyers wait in the activity's queue in this
// process, for tests that must know a buyer queued before they go on.
func (s *Service) Queued(activityID int64) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if q := s.queues[activityID]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// WaitingRepeats returns how many requests wait for the same buyer's
// purchase in flight instead of queueing.
func (s *Service) WaitingRepeats() int { return int(s.inflight.waiting.Load()) }

// CountKeyLookups makes the service count its look-ups of orders by
// idempotency key in n.
func (s *Service) CountKeyLookups(n *atomic.Int64) {
	lookup := s.orderByKey
	s.orderByKey = func(ctx context.Context, userID int64, key string) (seckill.Order, error) {
		n.Add(1)
		return lookup(ctx, userID, key)
	}
}

// Tickets returns how many buyers hold a ticket: queued, or in a batch.
func (s *Service) Tickets() int { return int(s.tickets.Load()) }

// newTicket is a ticket of its own, for tests that build batches by hand.
func newTicket(req seckill.BuyRequest) *ticket {
	t := new(ticket)
	t.init(req)
	return t
}
