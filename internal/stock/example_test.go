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
	// Each purchase deducts under its own lock fence: 10, 11, 12.
	for fence := int64(10); fence <= 12; fence++ {
		left, err := s.Deduct(ctx, 1, fence)
		switch {
		case errors.Is(err, stock.ErrSoldOut):
			fmt.Println("sold out")
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Println("sold one,", left, "left")
		}
	}
	// The order of fence 11 could not be written: give its unit back. A
	// second return of the same deduct puts nothing back.
	left, err := s.Return(ctx, 1, 11)
	fmt.Println(left, err)
	_, err = s.Return(ctx, 1, 11)
	fmt.Println(errors.Is(err, stock.ErrNoDeduct))
	// Output:
	// sold one, 1 left
	// sold one, 0 left
	// sold out
	// 1 <nil>
	// true
}
