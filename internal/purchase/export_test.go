package purchase

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

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
	lookup := s.holders.orderByKey
	s.holders.orderByKey = func(ctx context.Context, userID int64, key string) (seckill.Order, error) {
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

// serviceRedis holds, by service, the Redis client a test fixture built it
// on (instanceOn, roomInstanceOn), for tests that change Redis under it.
var serviceRedis sync.Map // *Service -> *redis.Client

// redisOf is the Redis client the fixture built s on.
func redisOf(s *Service) *redis.Client {
	rdb, ok := serviceRedis.Load(s)
	if !ok {
		panic("purchase test: service not built by instanceOn or roomInstanceOn")
	}
	return rdb.(*redis.Client)
}
