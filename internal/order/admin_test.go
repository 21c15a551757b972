package order

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// A total stock change is refused below the units sold and under any fence
// but the one claimed last: a purchase in flight can never end up past it.
func TestSetTotalStockGuards(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 5)
		for u := int64(1); u <= 3; u++ {
			if err := buy(s, a.ID, u, u, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Activities.SetTotalStock(ctx, a.ID, 10, 2); !errors.Is(err, ErrBelowSold) {
			t.Fatalf("total 2 with 3 sold: %v, want ErrBelowSold", err)
		}
		if _, err := s.Activities.SetTotalStock(ctx, a.ID, 9, 8); !errors.Is(err, ErrStaleFence) {
			t.Fatalf("total under an older fence: %v, want ErrStaleFence", err)
		}
		sold, err := s.Activities.SetTotalStock(ctx, a.ID, 10, 3)
		if err != nil || sold != 3 {
			t.Fatalf("total 3 with 3 sold: %d, %v", sold, err)
		}
		got, err := s.Activities.Activity(ctx, a.ID)
		if err != nil || got.TotalStock != 3 {
			t.Fatalf("total after reduce: %v, %v", got.TotalStock, err)
		}
		// The database's own guard holds against the new total.
		if err := buy(s, a.ID, 4, 11, ""); err == nil || count(t, s, a.ID) > 3 {
			t.Fatalf("a fourth order for a total of 3 was written (err %v)", err)
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 11); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Activities.SetTotalStock(ctx, a.ID, 11, 6); err != nil {
			t.Fatalf("top up under the newest fence: %v", err)
		}
		if err := buy(s, a.ID, 5, 12, ""); err != nil {
			t.Fatalf("buy after top-up: %v", err)
		}
	})
}

func TestMarkRefundedOnce(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 5)
		o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: 1, Fence: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Orders.MarkRefunded(ctx, o.ID, "alice", time.Now()); !errors.Is(err, ErrNotRefundRequired) {
			t.Fatalf("refund of a created order: %v, want ErrNotRefundRequired", err)
		}
		for _, c := range []StatusChange{
			{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 1},
			{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusExpired, To: seckill.OrderStatusRefundRequired, Fence: 2, PaidAt: time.Now()},
		} {
			if err := s.Orders.ChangeStatus(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		got, err := s.Orders.MarkRefunded(ctx, o.ID, "alice", at)
		if err != nil || got.Status != seckill.OrderStatusRefunded || got.RefundedBy != "alice" || !got.RefundedAt.Equal(at) {
			t.Fatalf("MarkRefunded = %+v, %v", got, err)
		}
		if _, err := s.Orders.MarkRefunded(ctx, o.ID, "bob", time.Now()); !errors.Is(err, ErrNotRefundRequired) {
			t.Fatalf("second refund: %v, want ErrNotRefundRequired", err)
		}
		if again, _ := s.Orders.AdminOrderByID(ctx, o.ID); again.RefundedBy != "alice" {
			t.Fatalf("the second call changed who refunded: %+v", again)
		}
		if _, err := s.Orders.MarkRefunded(ctx, "no-such-order", "alice", time.Now()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown order: %v, want ErrNotFound", err)
		}
	})
}

func TestListPages(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		for u := int64(1); u <= 5; u++ {
			if _, err := createOrder(ctx, s.Orders, seckill.Order{ID: fmt.Sprintf("o-%02d", u), ActivityID: a.ID, UserID: u, Fence: u}); err != nil {
				t.Fatal(err)
			}
		}
		var seen []string
		cursor := ""
		for range 5 {
			page, err := s.Orders.ListOrders(ctx, a.ID, seckill.OrderStatusCreated, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page {
				seen = append(seen, o.ID)
			}
			if len(page) < 2 {
				break
			}
			cursor = page[len(page)-1].ID
		}
		if fmt.Sprint(seen) != "[o-01 o-02 o-03 o-04 o-05]" {
			t.Fatalf("pages gave %v", seen)
		}
		if page, _ := s.Orders.ListOrders(ctx, a.ID, seckill.OrderStatusPaid, "", 10); len(page) != 0 {
			t.Fatalf("paid orders: %v", page)
		}
		b := newActivity(t, s, 1)
		acts, err := s.Activities.ListActivities(ctx, a.ID, 10)
		if err != nil || len(acts) != 1 || acts[0].ID != b.ID {
			t.Fatalf("activities after %d: %+v, %v", a.ID, acts, err)
		}
	})
}
