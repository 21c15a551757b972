package order_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

func Example() {
	ctx := context.Background()
	// The embedded database; production passes a MySQL DSN instead.
	s, err := order.Open(ctx, "sqlite::memory:", order.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	start := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	a, err := s.Activities.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 2, StartsAt: start, EndsAt: start.Add(time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each write carries the fence of the lock grant it was made under.
	o, err := s.Orders.CreateOrder(ctx, seckill.Order{ActivityID: a.ID, UserID: 42, Fence: 1})
	fmt.Println(o.UserID, o.Status, err)
	// A holder whose grant is older than one that wrote is refused.
	_, err = s.Orders.CreateOrder(ctx, seckill.Order{ActivityID: a.ID, UserID: 43, Fence: 1})
	fmt.Println("stale fence:", errors.Is(err, order.ErrStaleFence))
	// One order per buyer and activity.
	_, err = s.Orders.CreateOrder(ctx, seckill.Order{ActivityID: a.ID, UserID: 42, Fence: 2})
	fmt.Println("duplicate:", errors.Is(err, order.ErrDuplicate))
	_, err = s.Orders.CreateOrder(ctx, seckill.Order{ActivityID: a.ID, UserID: 43, Fence: 2})
	fmt.Println(err)
	// Never more orders than units, whatever the caller believes.
	_, err = s.Orders.CreateOrder(ctx, seckill.Order{ActivityID: a.ID, UserID: 44, Fence: 3})
	fmt.Println("sold out:", errors.Is(err, order.ErrSoldOut))
	n, _ := s.Orders.CountOrders(ctx, a.ID)
	fmt.Println(n, "orders")
	// Output:
	// 42 created <nil>
	// stale fence: true
	// duplicate: true
	// <nil>
	// sold out: true
	// 2 orders
}
