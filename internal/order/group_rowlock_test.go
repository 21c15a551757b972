package order

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A group that wrote nothing, whatever stopped it, must end its
// transaction before its connection goes back to the pool, or that
// connection keeps the activity's row locked and every later write of the
// activity waits for it. Here, after a refused write (a stale fence), one whose lease had ended
// (refused under the row lock) and one whose every order a unique key kept
// out, another transaction must lock the row at once (NOWAIT), and the
// next write must commit.
//
// Can fail: with writeGroup's deferred tx.Rollback taken away, "the
// activity's row is still locked" (Lock wait timeout exceeded).
func TestRefusedGroupsLeaveNoRowLocked(t *testing.T) {
	s, _ := openMariaDB(t)
	ctx := context.Background()
	a := newActivity(t, s, 10)
	if _, err := s.Orders.CreateOrders(ctx, a.ID, 5, batchOf(1)); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	refusals := []func() error{
		func() error { _, err := s.Orders.CreateOrders(ctx, a.ID, 4, batchOf(2)); return err },
		func() error {
			r := s.Orders.CreateOrderGroup(ctx, []Write{{ActivityID: a.ID, Fence: 6, Orders: batchOf(2), Lease: ended}})
			return r[0].Err
		},
		func() error {
			b, err := s.Orders.CreateOrders(ctx, a.ID, 7, batchOf(1))
			if err == nil && len(b.Taken) != 1 {
				return errors.New("user 1's second order was not kept out")
			}
			return nil
		},
	}
	for i, refused := range refusals {
		if err := refused(); err == nil && i < 2 {
			t.Fatalf("refusal %d wrote", i)
		}
		lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.db.WithContext(lctx).Exec("SELECT id FROM activities WHERE id = ? FOR UPDATE NOWAIT", a.ID).Error
		lcancel()
		if err != nil {
			t.Fatalf("after refusal %d the activity's row is still locked: %v", i, err)
		}
	}
	if _, err := s.Orders.CreateOrders(ctx, a.ID, 8, batchOf(3)); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if n, sd := count(t, s, a.ID), sold(t, s, a.ID); n != 2 || sd != 2 {
		t.Errorf("%d orders, sold %d; want 2 and 2", n, sd)
	}
}
