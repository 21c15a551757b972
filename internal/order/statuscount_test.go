package order

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// countStatusQueries counts the GROUP BY counts s runs from now on.
func countStatusQueries(t *testing.T, s *Store) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	err := s.db.Callback().Row().After("gorm:row").Register("test:count_status_queries", func(db *gorm.DB) {
		if strings.Contains(db.Statement.SQL.String(), "GROUP BY") {
			n.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return &n
}

// Twenty scrapes within the maximum age, ten of them at once, cost one
// count; the audit's CountByStatus still counts every time; the snapshot is
// counted again once it is older than the maximum age.
func TestStatusCountsAreASnapshot(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var clockMu sync.Mutex
		clock := time.Now()
		s.Orders.statuses.now = func() time.Time {
			clockMu.Lock()
			defer clockMu.Unlock()
			return clock
		}
		a := newActivity(t, s, 10)
		payOrder(t, s, a, 1)
		payOrder(t, s, a, 2)
		queries := countStatusQueries(t, s)

		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if counts, err := s.Orders.StatusCounts(ctx); err != nil || counts[seckill.OrderStatusCreated] != 2 {
					t.Errorf("concurrent StatusCounts = %v, %v; want 2 created", counts, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		for range 10 {
			if counts, err := s.Orders.StatusCounts(ctx); err != nil || counts[seckill.OrderStatusCreated] != 2 {
				t.Fatalf("StatusCounts = %v, %v; want 2 created", counts, err)
			}
		}
		if n := queries.Load(); n != 1 {
			t.Errorf("20 StatusCounts within %v ran %d counts, want 1", DefaultStatusCountMaxAge, n)
		}

		// A caller cannot change the snapshot through the map it got.
		got, _ := s.Orders.StatusCounts(ctx)
		got[seckill.OrderStatusCreated] = 99

		payOrder(t, s, a, 3)
		if counts, err := s.Orders.CountByStatus(ctx, 0); err != nil || counts[seckill.OrderStatusCreated] != 3 {
			t.Errorf("CountByStatus after a third order = %v, %v; want the exact 3 created", counts, err)
		}
		if counts, err := s.Orders.StatusCounts(ctx); err != nil || counts[seckill.OrderStatusCreated] != 2 {
			t.Errorf("StatusCounts within the age = %v, %v; want the snapshot's 2 created", counts, err)
		}

		clockMu.Lock()
		clock = clock.Add(DefaultStatusCountMaxAge)
		clockMu.Unlock()
		before := queries.Load()
		if counts, err := s.Orders.StatusCounts(ctx); err != nil || counts[seckill.OrderStatusCreated] != 3 {
			t.Errorf("StatusCounts after %v = %v, %v; want 3 created", DefaultStatusCountMaxAge, counts, err)
		}
		if n := queries.Load() - before; n != 1 {
			t.Errorf("an old snapshot was counted %d times, want 1", n)
		}
	})
}

// A caller whose context ends stops waiting for the count, but the count
// it started is not cut short with it: it is kept for the next caller.
func TestStatusCountsOutliveTheCallerWhoStartedThem(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 10)
		payOrder(t, s, a, 1)
		queries := countStatusQueries(t, s)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// A fast count (SQLite in memory) may answer before the select sees
		// the context's end.
		if _, err := s.Orders.StatusCounts(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("StatusCounts with a cancelled context: %v, want context.Canceled", err)
		}
		counts, err := s.Orders.StatusCounts(context.Background())
		if err != nil || counts[seckill.OrderStatusCreated] != 1 {
			t.Fatalf("StatusCounts = %v, %v; want 1 created", counts, err)
		}
		if n := queries.Load(); n != 1 {
			t.Errorf("%d counts, want 1: the next caller shares the count the cancelled one started", n)
		}
	})
}
