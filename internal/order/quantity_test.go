package order

import (
	"context"
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The database counts units, not orders (docs/API.md "Quantity per
// buyer"): a batch's claim takes each order's quantity or refuses the order
// (Over), in turn, never past the total; a duplicate kept out by the unique
// key gives all its units back; an expiry gives back the order's quantity.
// Can fail: a claim of one unit per order writes 4 orders holding 9 units
// of 6.
func TestClaimCountsUnits(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testenv.MySQLDSN(t))
	a := newActivity(t, s, 6)
	orders := []seckill.Order{
		{ID: "q-1", UserID: 1, Quantity: 3},
		{ID: "q-2", UserID: 2, Quantity: 4}, // 3 left: over
		{ID: "q-3", UserID: 3, Quantity: 2},
		{ID: "q-4", UserID: 4, Quantity: 1},
	}
	b, err := s.Orders.CreateOrders(ctx, a.ID, 1, orders)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Written) != 3 || len(b.Over) != 1 || b.Over[0].ID != "q-2" {
		t.Fatalf("written %v, over %v: want q-1, q-3, q-4 written and q-2 over", b.Written, b.Over)
	}
	if got := sold(t, s, a.ID); got != 6 {
		t.Errorf("sold %d, want 6 units", got)
	}
	// User 1 again, in a later batch: kept out, its 2 units claimed and
	// given back in the same transaction; the activity is full anyway.
	a2 := newActivity(t, s, 10)
	if _, err := s.Orders.CreateOrders(ctx, a2.ID, 1, []seckill.Order{{ID: "r-1", UserID: 1, Quantity: 3}}); err != nil {
		t.Fatal(err)
	}
	b, err = s.Orders.CreateOrders(ctx, a2.ID, 2, []seckill.Order{{ID: "r-2", UserID: 1, Quantity: 2}, {ID: "r-3", UserID: 2, Quantity: 5}})
	if err != nil || len(b.Taken) != 1 || len(b.Written) != 1 {
		t.Fatalf("a holder and a new buyer: %+v, %v", b, err)
	}
	if got := sold(t, s, a2.ID); got != 8 {
		t.Errorf("sold %d after a kept-out order of 2, want 8 (3 + 5)", got)
	}
	if err := s.Orders.ChangeStatus(ctx, StatusChange{OrderID: "r-3", ActivityID: a2.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 1}); err != nil {
		t.Fatal(err)
	}
	if got := sold(t, s, a2.ID); got != 3 {
		t.Errorf("sold %d after the order of 5 expired, want 3", got)
	}
	n, units, err := s.Orders.CountHeld(ctx, a2.ID)
	if err != nil || n != 1 || units != 3 {
		t.Errorf("held: %d orders, %d units, %v; want 1 order of 3", n, units, err)
	}
}
