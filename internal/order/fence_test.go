package order

import (
	"context"
	"errors"
	"testing"
)

// TestStaleFenceCannotWrite: once an order is written under fence 5, a holder
// of fence 5 or older (its lease expired, a newer grant wrote) is refused.
func TestStaleFenceCannotWrite(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		if err := buy(s, a.ID, 1, 5, ""); err != nil {
			t.Fatal(err)
		}
		for _, fence := range []int64{5, 3, 0} {
			if err := buy(s, a.ID, 2, fence, ""); !errors.Is(err, ErrStaleFence) {
				t.Errorf("fence %d after fence 5 wrote: %v, want ErrStaleFence", fence, err)
			}
		}
		if err := buy(s, a.ID, 2, 6, ""); err != nil {
			t.Errorf("fence 6: %v", err)
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != 6 {
			t.Errorf("Fence = %d, %v; want 6", f, err)
		}
		if n := count(t, s, a.ID); n != 2 {
			t.Errorf("CountOrders = %d, want 2", n)
		}
	})
}

// TestClaimFenceShutsOutOlderGrants: after a reload claims fence 7, a
// purchase still in flight under fence 6 cannot write.
func TestClaimFenceShutsOutOlderGrants(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 7); err != nil {
			t.Fatal(err)
		}
		if err := buy(s, a.ID, 1, 6, ""); !errors.Is(err, ErrStaleFence) {
			t.Errorf("order under fence 6 after claim 7: %v, want ErrStaleFence", err)
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 7); !errors.Is(err, ErrStaleFence) {
			t.Errorf("second claim of fence 7: %v, want ErrStaleFence", err)
		}
		if err := buy(s, a.ID, 1, 8, ""); err != nil {
			t.Errorf("order under fence 8: %v", err)
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID+1000, 9); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("claim on a missing activity: %v, want ErrActivityNotFound", err)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1 (a claim is not an order)", n)
		}
	})
}
