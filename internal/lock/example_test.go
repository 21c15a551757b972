package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
)

func Example() {
	srv := miniredis.NewMiniRedis()
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()

	locks := lock.New(rdb, nil)
	defer locks.Close()

	ctx := context.Background()
	key := "seckill:{act:7}:lock"
	l, err := locks.Obtain(ctx, key, 5*time.Second, nil)
	if err != nil {
		fmt.Println("obtain:", err)
		return
	}
	// Work under the lease: every deadline derives from l.Context(), which
	// ends before the lock can expire in Redis.
	work, cancel := context.WithTimeout(l.Context(), time.Second)
	defer cancel()
	_ = work

	_, err = locks.Obtain(ctx, key, 5*time.Second, nil)
	fmt.Println("second obtain:", errors.Is(err, lock.ErrNotObtained))
	fmt.Println("fence:", l.Fence())
	fmt.Println("release:", l.Release(ctx))

	l, _ = locks.Obtain(ctx, key, 5*time.Second, nil)
	fmt.Println("next fence:", l.Fence())
	_ = l.Release(ctx)
	// Output:
	// second obtain: true
	// fence: 1
	// release: <nil>
	// next fence: 2
}
