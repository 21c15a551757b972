package purchase

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// A batch's COMMIT answered with an error but had committed, and the
// database had refused one of its orders for want of units while it still
// had some (Redis had more than the database). As after a COMMIT that
// answered, the buyer learns how many are left, and Redis keeps deducted
// only its excess over the database. Here the truth is 4 of 6 left (user 1
// holds 2), Redis says 6; users 2 and 3 ask for 3 each.
// Can fail: keeping every unit of user 3's refused order deducted tells
// user 3 sold_out and leaves Redis at 0 with 1 unit unsold.
func TestUnknownCommitOverTheDatabaseGivesBackWhatItStillHas(t *testing.T) {
	s, _, a := resolveFixture(t, 6)
	ctx := context.Background()
	if err := s.stock.Load(ctx, a.ID, 6, 1); err != nil {
		t.Fatal(err)
	}
	if b, err := s.orders.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 1, Quantity: 2}}); err != nil || len(b.Written) != 1 {
		t.Fatalf("user 1's order: %+v, %v", b, err)
	}
	g := stock.Grant{Fence: 2, Token: "t"}
	_, taken, remaining, err := s.stock.DeductEach(ctx, a.ID, g, []int64{2, 3}, []int64{3, 3})
	if err != nil || taken != 6 {
		t.Fatalf("deduct: %d, %v", taken, err)
	}
	ords := []seckill.Order{{ID: newOrderID(), UserID: 2, Quantity: 3}, {ID: newOrderID(), UserID: 3, Quantity: 3}}
	if b, err := s.orders.Orders.CreateOrders(ctx, a.ID, g.Fence, ords); err != nil || len(b.Written) != 1 || len(b.Over) != 1 {
		t.Fatalf("the batch's write: %+v, %v", b, err)
	}
	rb := &batch{activity: a, outs: make([]outcome, 2)}
	sl := &deductedBatch{s: s, b: rb, in: []int{0, 1}, g: grant{lease: ctx, stock: g}, d: deducted{orders: ords, remaining: remaining}}
	sl.resolveCommit(order.ErrCommitUnknown)

	if rb.outs[0].err != nil || rb.outs[0].order.ID != ords[0].ID {
		t.Errorf("user 2: %+v, want order %s", rb.outs[0], ords[0].ID)
	}
	var e *seckill.Error
	if !errors.As(rb.outs[1].err, &e) || e.Code != seckill.ENotEnoughStock || e.RemainingStock != 1 {
		t.Errorf("user 3: %v, want not_enough_stock with remaining_stock 1", rb.outs[1].err)
	}
	if left, _ := s.stock.Remaining(ctx, a.ID); left != 1 {
		t.Errorf("Redis remaining %d, want 1: the unit the database still has", left)
	}
}
