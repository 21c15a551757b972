package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
)

// notOversold is the invariant the guard tests judge by.
func notOversold(orders, total int64) error {
	if orders > total {
		return fmt.Errorf("oversold: %d orders for %d units", orders, total)
	}
	return nil
}

// TestSQLGuardRefusesOversell: more buyers than units reach the database, as
// when Redis lost its data or was loaded wrong. The guarded write stops at the
// total; the seed's unguarded insert, run the same way, is caught overselling
// by the same check.
func TestSQLGuardRefusesOversell(t *testing.T) {
	const total, buyers = 5, 12
	backends(t, func(t *testing.T, s *Store) {
		guarded := newActivity(t, s, total)
		var soldOut int
		for u := int64(1); u <= buyers; u++ {
			switch err := buy(s, guarded.ID, u, u, ""); {
			case errors.Is(err, errSoldOut):
				soldOut++
			case err != nil:
				t.Fatalf("buyer %d: %v", u, err)
			}
		}
		if err := notOversold(count(t, s, guarded.ID), total); err != nil {
			t.Error(err)
		}
		if soldOut != buyers-total {
			t.Errorf("%d buyers refused as sold out, want %d", soldOut, buyers-total)
		}

		unguarded := newActivity(t, s, total)
		for u := int64(1); u <= buyers; u++ {
			row := s.Orders.newOrderRow(seckill.Order{ID: uuid.NewString(), ActivityID: unguarded.ID, UserID: u, Status: "created", Fence: u, CreatedAt: now()})
			if err := s.db.Create(&row).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := notOversold(count(t, s, unguarded.ID), total); err == nil {
			t.Error("the unguarded insert was not caught overselling: the check cannot fail")
		} else {
			t.Logf("unguarded insert, as expected: %v", err)
		}
	})
}

// TestConcurrentBuyersNeverExceedStock: many buyers at once, each retrying
// under a newer fence whenever another wrote first (as a new lock grant
// would), more buyers than units. The database must end with exactly the
// total, every other buyer told sold out.
func TestConcurrentBuyersNeverExceedStock(t *testing.T) {
	const total, buyers = 20, 60
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, total)
		var (
			fences           atomic.Int64
			sold, soldOut    atomic.Int64
			stale            atomic.Int64
			highestSoldFence atomic.Int64
			start            = make(chan struct{})
			wg               sync.WaitGroup
		)
		for u := int64(1); u <= buyers; u++ {
			wg.Go(func() {
				<-start
				for {
					fence := fences.Add(1)
					o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: u, Fence: fence})
					switch {
					case errors.Is(err, ErrStaleFence):
						stale.Add(1)
						continue
					case errors.Is(err, errSoldOut):
						soldOut.Add(1)
					case err != nil:
						t.Errorf("buyer %d: %v", u, err)
					default:
						sold.Add(1)
						for {
							h := highestSoldFence.Load()
							if o.Fence <= h || highestSoldFence.CompareAndSwap(h, o.Fence) {
								break
							}
						}
					}
					return
				}
			})
		}
		close(start)
		wg.Wait()

		if sold.Load() != total || soldOut.Load() != buyers-total {
			t.Errorf("sold %d, sold out %d; want %d and %d", sold.Load(), soldOut.Load(), total, buyers-total)
		}
		if err := notOversold(count(t, s, a.ID), total); err != nil {
			t.Error(err)
		}
		if n := count(t, s, a.ID); n != sold.Load() {
			t.Errorf("CountOrders = %d, but %d buyers were told they bought", n, sold.Load())
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != highestSoldFence.Load() {
			t.Errorf("Fence = %d, %v; want the highest fence that sold, %d", f, err, highestSoldFence.Load())
		}
		t.Logf("%d buyers, %d units: sold %d, sold out %d, %d stale-fence retries", buyers, total, sold.Load(), soldOut.Load(), stale.Load())
	})
}
