package order

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// payOrder writes an order of user under a fresh activity grant and returns it.
func payOrder(t *testing.T, s *Store, a seckill.Activity, user int64) seckill.Order {
	t.Helper()
	o, err := s.CreateOrder(context.Background(), seckill.Order{ActivityID: a.ID, UserID: user, Fence: user})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func sold(t *testing.T, s *Store, activityID int64) int64 {
	t.Helper()
	var row activityRow
	if err := s.db.Select("sold").Take(&row, activityID).Error; err != nil {
		t.Fatal(err)
	}
	return row.Sold
}

// TestPaymentWindowSetsPayBy: with payments on an order gets pay_by =
// created_at + window; with them off, none (as before payments existed).
func TestPaymentWindowSetsPayBy(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 10)
		off := payOrder(t, s, a, 1)
		if !off.PayBy.IsZero() {
			t.Errorf("payments off: PayBy = %v, want none", off.PayBy)
		}
		s.SetPaymentWindow(90 * time.Second)
		on := payOrder(t, s, a, 2)
		if want := on.CreatedAt.Add(90 * time.Second); !on.PayBy.Equal(want) {
			t.Errorf("PayBy = %v, want created_at + 90s = %v", on.PayBy, want)
		}
		got, err := s.OrderByID(context.Background(), on.ID)
		if err != nil || !got.PayBy.Equal(on.PayBy) || got.Status != seckill.OrderStatusCreated {
			t.Errorf("OrderByID = %+v, %v; want it as written", got, err)
		}
	})
}

// TestStatusChangesOnlyFromItsStatusUnderANewerFence: the status write's two
// guards. A change applies once (the second finds the status moved on), and
// a grant no newer than the last writer's is refused; an expiry takes the
// unit off sold in the same transaction, and CountOrders stops counting it.
func TestStatusChangesOnlyFromItsStatusUnderANewerFence(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		o := payOrder(t, s, a, 1)
		payOrder(t, s, a, 2)
		expire := StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 5}

		if err := s.ChangeStatus(ctx, expire); err != nil {
			t.Fatal(err)
		}
		if n := sold(t, s, a.ID); n != 1 {
			t.Errorf("sold = %d after an expiry, want 1", n)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1: expired orders hold no unit", n)
		}
		// The same expiry again, by a newer grant: the status is no longer created.
		expire.Fence = 6
		if err := s.ChangeStatus(ctx, expire); !errors.Is(err, ErrStatusChanged) {
			t.Errorf("second expiry: %v, want ErrStatusChanged", err)
		}
		// A late payment under an older grant than the expiry's.
		late := StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusExpired, To: seckill.OrderStatusRefundRequired,
			PaidAt: time.Now(), Fence: 5}
		if err := s.ChangeStatus(ctx, late); !errors.Is(err, ErrStaleFence) {
			t.Errorf("change under fence 5 after fence 5 wrote: %v, want ErrStaleFence", err)
		}
		late.Fence = 7
		if err := s.ChangeStatus(ctx, late); err != nil {
			t.Fatal(err)
		}
		if n := sold(t, s, a.ID); n != 1 {
			t.Errorf("sold = %d after refund_required, want 1: the unit is not taken back", n)
		}
		got, err := s.OrderByID(ctx, o.ID)
		if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.PaidAt.IsZero() || got.StatusFence != 7 {
			t.Errorf("order = %+v, %v; want refund_required, paid_at set, status fence 7", got, err)
		}
		counts, err := s.CountByStatus(ctx, a.ID)
		if err != nil || counts[seckill.OrderStatusCreated] != 1 || counts[seckill.OrderStatusRefundRequired] != 1 || len(counts) != 2 {
			t.Errorf("CountByStatus = %v, %v", counts, err)
		}
		if err := s.ChangeStatus(ctx, StatusChange{OrderID: "nope", ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusPaid, Fence: 9}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown order: %v, want ErrNotFound", err)
		}
		if err := s.ChangeStatus(ctx, StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusPaid, To: seckill.OrderStatusExpired, Fence: 9}); err == nil {
			t.Error("paid -> expired was accepted")
		}
	})
}

// TestConcurrentExpiriesGiveOneUnitBack: many writers expire the same order
// at once, each under its own (newer) grant, as instances whose locks were
// lost would: one wins, sold drops by exactly one.
func TestConcurrentExpiriesGiveOneUnitBack(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 10)
		o := payOrder(t, s, a, 1)
		payOrder(t, s, a, 2)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.ChangeStatus(context.Background(), StatusChange{OrderID: o.ID, ActivityID: a.ID,
					From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: int64(10 + i)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrStatusChanged) && !errors.Is(err, ErrStaleFence):
				t.Errorf("expiry: %v", err)
			}
		}
		if won != 1 || sold(t, s, a.ID) != 1 {
			t.Errorf("%d expiries applied, sold = %d; want 1 and 1", won, sold(t, s, a.ID))
		}
	})
}

// TestClaimDueSharesTheQueue: due created orders are claimed once across
// concurrent claimers (SKIP LOCKED on MariaDB) until the claim lapses; orders
// not yet due, or no longer created, are never handed out.
func TestClaimDueSharesTheQueue(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 100)
		s.SetPaymentWindow(time.Second)
		const due = 40
		for u := int64(1); u <= due; u++ {
			payOrder(t, s, a, u)
		}
		s.SetPaymentWindow(time.Hour)
		payOrder(t, s, a, 1000) // not due
		now := time.Now().Add(2 * time.Second)

		oldest, err := s.OldestDue(ctx, now)
		if err != nil || oldest.IsZero() || !oldest.Before(now) {
			t.Errorf("OldestDue = %v, %v", oldest, err)
		}
		var (
			mu      sync.Mutex
			claimed = map[string]int{}
			wg      sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for {
					got, err := s.ClaimDue(ctx, now, 3, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, o := range got {
						claimed[o.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(claimed) != due {
			t.Errorf("%d orders claimed, want the %d due", len(claimed), due)
		}
		for id, n := range claimed {
			if n != 1 {
				t.Errorf("order %s claimed %d times while its claim held", id, n)
			}
		}
		again, err := s.ClaimDue(ctx, now.Add(2*time.Minute), 100, time.Minute)
		if err != nil || len(again) != due {
			t.Errorf("after the claims lapsed: %d claimed, %v; want %d", len(again), err, due)
		}
	})
}
