package stock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// emptyStock is a Store on the test's Redis in a key space of its own, ks,
// nothing loaded; rdb and ks are for the test's direct reads and writes.
func emptyStock(t *testing.T) (s *stock.Store, rdb *redis.Client, ks keys.Space) {
	t.Helper()
	rdb, ks = testenv.Redis(t), keys.NewSpace(testenv.Prefix(t))
	return stock.New(rdb, ks), rdb, ks
}

// loadedStock is emptyStock with activity 1's stock loaded at fence 1.
func loadedStock(t *testing.T, total int64) (s *stock.Store, rdb *redis.Client, ks keys.Space) {
	t.Helper()
	s, rdb, ks = emptyStock(t)
	if err := s.Load(context.Background(), 1, total, 1); err != nil {
		t.Fatal(err)
	}
	return s, rdb, ks
}

// obtain is a grant of the lock at key for ttl, by a lock client of its own
// (an instance's), closed when the test ends.
func obtain(t *testing.T, rdb redis.UniversalClient, key string, ttl time.Duration) *lock.Lock {
	t.Helper()
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	l, err := locks.Obtain(context.Background(), key, ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func assertNoKey(t *testing.T, rdb redis.UniversalClient, key string) {
	t.Helper()
	n, err := rdb.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("key %s exists; the failed call must not create it", key)
	}
}

// deduct takes n units for the grant as the purchase path does, one unit
// for each buyer (DeductEach): the buyers given, or else n made up for the
// grant, the same for a repeat of its deduct.
func deduct(ctx context.Context, s *stock.Store, activityID int64, g stock.Grant, n int64, buyers ...int64) (taken, remaining int64, err error) {
	if len(buyers) == 0 {
		for i := range n {
			buyers = append(buyers, g.Fence*1000+i+1)
		}
	}
	units := make([]int64, len(buyers))
	for i := range units {
		units[i] = 1
	}
	_, taken, remaining, err = s.DeductEach(ctx, activityID, g, buyers, units)
	return taken, remaining, err
}
