package order

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultStatusCountMaxAge is how old the counts StatusCounts answers may be.
// The count is a GROUP BY over the whole orders table; read per scrape, any
// number of scrapers would each run it on the pool the buyers share.
const DefaultStatusCountMaxAge = 10 * time.Second

// statusCountTimeout bounds the one count shared by every caller waiting for
// it; each caller still stops waiting when its own context ends.
const statusCountTimeout = 2 * time.Second

// statusSnapshot is the last count of orders by status of all activities.
// The zero value is ready: empty, so the first call counts.
type statusSnapshot struct {
	maxAge time.Duration    // 0: DefaultStatusCountMaxAge
	now    func() time.Time // nil: time.Now
	flight singleflight.Group

	mu     sync.Mutex
	counts map[string]int64 // nil until the first count succeeds
	at     time.Time        // when the count that read counts started
}

func (s *statusSnapshot) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// fresh returns the snapshot if it is younger than the maximum age.
func (s *statusSnapshot) fresh() (map[string]int64, bool) {
	maxAge := s.maxAge
	if maxAge <= 0 {
		maxAge = DefaultStatusCountMaxAge
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil || s.clock().Sub(s.at) >= maxAge {
		return nil, false
	}
	return s.counts, true
}

func (s *statusSnapshot) store(counts map[string]int64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts, s.at = counts, at
}

// StatusCounts returns how many orders of all activities are in each status
// (statuses without orders are absent), as counted at most
// DefaultStatusCountMaxAge ago: any number of calls within that age cost one
// query, and calls that find the snapshot too old at the same time share one
// query. It is for metrics; CountByStatus is exact (the audit reads it). A
// failed count is not kept: the next call counts again.
func (s *Orders) StatusCounts(ctx context.Context) (map[string]int64, error) {
	if counts, ok := s.statuses.fresh(); ok {
		return maps.Clone(counts), nil
	}
	// The shared count runs in singleflight's goroutine, which ends with the
	// count (statusCountTimeout at most), and not with the context of the
	// caller that happened to start it: the others wait for it too.
	shared := context.WithoutCancel(ctx)
	ch := s.statuses.flight.DoChan("", func() (any, error) {
		// A count may have finished between fresh and DoChan.
		if counts, ok := s.statuses.fresh(); ok {
			return counts, nil
		}
		ctx, cancel := context.WithTimeout(shared, statusCountTimeout)
		defer cancel()
		started := s.statuses.clock()
		counts, err := s.CountByStatus(ctx, 0)
		if err != nil {
			return nil, err
		}
		s.statuses.store(counts, started)
		return counts, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		counts, _ := r.Val.(map[string]int64)
		return maps.Clone(counts), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("order: count orders by status: %w", context.Cause(ctx))
	}
}
