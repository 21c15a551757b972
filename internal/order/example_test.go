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
	// A lock grant writes its batch of orders under its fence.
	b, err := s.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 42}})
	fmt.Println(len(b.Written), b.Written[0].UserID, b.Written[0].Status, err)
	// A holder whose grant is older than one that wrote is refused.
	_, err = s.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 43}})
	fmt.Println("stale fence:", errors.Is(err, order.ErrStaleFence))
	// One order per buyer and activity: a unique key keeps a second out.
	b, err = s.Orders.CreateOrders(ctx, a.ID, 2, []seckill.Order{{UserID: 42}})
	fmt.Println("kept out:", len(b.Taken), err)
	// Never more orders than units, whatever the caller believes.
	b, err = s.Orders.CreateOrders(ctx, a.ID, 3, []seckill.Order{{UserID: 43}, {UserID: 44}})
	fmt.Println("written:", len(b.Written), "over:", len(b.Over), err)
	n, _ := s.Orders.CountOrders(ctx, a.ID)
	fmt.Println(n, "orders")
	// Output:
	// 1 42 created <nil>
	// stale fence: true
	// kept out: 1 <nil>
	// written: 1 over: 1 <nil>
	// 2 orders
}
