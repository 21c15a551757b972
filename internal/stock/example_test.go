package stock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
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
	s := stock.New(rdb, keys.Space{})
	if err := s.Load(ctx, 1, 2, 1); err != nil {
		fmt.Println(err)
		return
	}
	// Each lock grant deducts once for its batch of buyers: fences 10 and 11.
	for fence := int64(10); fence <= 11; fence++ {
		buyers := []int64{fence*10 + 1, fence*10 + 2, fence*10 + 3}
		_, taken, left, err := s.DeductEach(ctx, 1, stock.Grant{Fence: fence}, buyers, []int64{1, 1, 1})
		switch {
		case errors.Is(err, stock.ErrSoldOut):
			fmt.Println("sold out")
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Println("took", taken, "of 3,", left, "left")
		}
	}
	// Grant 10 wrote one of its two orders: it keeps 1 unit and gives 1 back.
	// Settling again gives back nothing more.
	left, back, err := s.Settle(ctx, 1, stock.Grant{Fence: 10}, 1)
	fmt.Println(left, back, err)
	left, back, err = s.Settle(ctx, 1, stock.Grant{Fence: 10}, 1)
	fmt.Println(left, back, err)
	// Output:
	// took 2 of 3, 0 left
	// sold out
	// 1 1 <nil>
	// 1 0 <nil>
}
