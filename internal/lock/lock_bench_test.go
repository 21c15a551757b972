package lock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// pairer takes a lock once and, if it got it, releases it; it reports
// whether that made a pair.
type pairer func(ctx context.Context, key string) bool

const (
	benchTTL = 10 * time.Second
	// parallelism*GOMAXPROCS goroutines: enough to keep Redis busy over
	// round trips, fewer than the client's pool (10 per CPU).
	parallelism = 4
)

func pairers(rdb *redis.Client) map[string]pairer {
	ours := lock.New(rdb, nil)
	rl := redislock.New(rdb)
	rs := redsync.New(goredis.NewPool(rdb))
	return map[string]pairer{
		"lock": func(ctx context.Context, key string) bool {
			l, err := ours.Obtain(ctx, key, benchTTL, nil)
			return err == nil && l.Release(ctx) == nil
		},
		"redislock": func(ctx context.Context, key string) bool {
			l, err := rl.Obtain(ctx, key, benchTTL, nil)
			return err == nil && l.Release(ctx) == nil
		},
		"redsync": func(ctx context.Context, key string) bool {
			m := rs.NewMutex(key, redsync.WithExpiry(benchTTL), redsync.WithTries(1))
			if m.LockContext(ctx) != nil {
				return false
			}
			ok, err := m.UnlockContext(ctx)
			return ok && err == nil
		},
	}
}

// BenchmarkPairs measures acquire+release pairs per second: "contended" has
// every goroutine try one key (try-once; a refused acquire makes no pair),
// "uncontended" gives each goroutine its own key. This package runs with
// fencing, as always.
func BenchmarkPairs(b *testing.B) {
	rdb := testenv.Redis(b)
	prefix := testenv.Prefix(b)
	ctx := context.Background()
	for _, name := range []string{"lock", "redislock", "redsync"} {
		pair := pairers(rdb)[name]
		b.Run("contended/"+name, func(b *testing.B) {
			key := prefix + name + ":{hot}:lock"
			var pairs atomic.Int64
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if pair(ctx, key) {
						pairs.Add(1)
					}
				}
			})
			b.ReportMetric(float64(pairs.Load())/b.Elapsed().Seconds(), "pairs/s")
		})
		b.Run("uncontended/"+name, func(b *testing.B) {
			var next, pairs atomic.Int64
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				key := prefix + name + ":{k" + strconv.FormatInt(next.Add(1), 10) + "}:lock"
				for pb.Next() {
					if pair(ctx, key) {
						pairs.Add(1)
					}
				}
			})
			b.ReportMetric(float64(pairs.Load())/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
