package stock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/stock"
)

func Example() {
	// An in-process Redis keeps the example self-contained; the service uses
	// the same calls against a real one.
	mr, err := miniredis.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	ctx := context.Background()
	s := stock.New(rdb, "")
	if err := s.Load(ctx, 1, 2, 1); err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		left, _, err := s.Deduct(ctx, 1)
		switch {
		case errors.Is(err, stock.ErrSoldOut):
			fmt.Println("sold out")
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Println("sold one,", left, "left")
		}
	}
	// The order for the last unit could not be written: give the unit back,
	// naming the epoch it was deducted in (the one loaded above).
	left, err := s.Return(ctx, 1, 1)
	fmt.Println(left, err)
	// Output:
	// sold one, 1 left
	// sold one, 0 left
	// sold out
	// 1 <nil>
}
