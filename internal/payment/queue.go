package payment

import (
	"context"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
)

// The delay queue is the orders table (see order.ClaimDue): every PollInterval
// each instance claims the created orders whose pay_by has passed and runs
// their verification. A verification that cannot finish (provider unknown,
// lock busy) leaves the order created and due; its claim lapses after
// claimFor and the queue takes it again.

const (
	claimBatch   = 32 // orders claimed per statement
	queueWorkers = 8  // verifications run at once by one instance's queue
)

// claimFor is how long a claim keeps other instances off a due order: long
// enough for its verification, short enough that a crashed instance's
// orders are soon taken over.
func (s *Service) claimFor() time.Duration { return 2 * s.cfg.LockTTL }

// Start runs the delay queue in the background until Close. Calling it more
// than once starts one queue.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.mu.Lock()
		s.stop, s.stopped = cancel, make(chan struct{})
		s.mu.Unlock()
		go func() {
			defer close(s.stopped)
			s.runQueue(ctx)
		}()
	})
}

// Close stops the delay queue, waits for the verifications it started, and
// drops idle provider connections. It always returns nil.
func (s *Service) Close() error {
	s.mu.Lock()
	stop, stopped := s.stop, s.stopped
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	if s.client != nil {
		s.client.Close()
	}
	return nil
}

func (s *Service) runQueue(ctx context.Context) {
	ticker := time.NewTicker(s.cfg.PollInterval)
	defer ticker.Stop()
	for {
		s.drainDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// drainDue verifies due orders until none is left unclaimed, or ctx ends.
func (s *Service) drainDue(ctx context.Context) {
	now := s.now()
	if oldest, err := s.orders.DelayQueue.OldestDue(ctx, now); err == nil && !oldest.IsZero() {
		s.m.lag.Set(now.Sub(oldest).Seconds())
	} else if err == nil {
		s.m.lag.Set(0)
	}
	for ctx.Err() == nil {
		due, err := s.orders.DelayQueue.ClaimDue(ctx, s.now(), claimBatch, s.claimFor())
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("payment: delay queue could not claim due orders", "err", err)
			}
			return
		}
		s.verifyAll(ctx, due)
		if len(due) < claimBatch {
			return
		}
	}
}

// verifyAll runs the verifications of due, queueWorkers at a time, and
// returns when all have finished.
func (s *Service) verifyAll(ctx context.Context, due []seckill.Order) {
	sem := make(chan struct{}, queueWorkers)
	var wg sync.WaitGroup
	for _, o := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := s.verify(ctx, o, triggerDelayQueue); err != nil && ctx.Err() == nil {
				s.log.Debug("payment: due order left for a later round", "order_id", o.ID, "err", err)
			}
		})
	}
	wg.Wait()
}
