package stock_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// emptyStock is a Store on the test's Redis under a prefix of its own,
// nothing loaded; rdb and prefix are for the test's direct reads and writes.
func emptyStock(t *testing.T) (s *stock.Store, rdb *redis.Client, prefix string) {
	t.Helper()
	rdb, prefix = testenv.Redis(t), testenv.Prefix(t)
	return stock.New(rdb, keys.NewSpace(prefix)), rdb, prefix
}

// loadedStock is a Store on the test's Redis under a prefix of its own,
// with activity 1's stock loaded at fence 1; rdb and prefix are for the
// test's direct reads and writes.
func loadedStock(t *testing.T, total int64) (s *stock.Store, rdb *redis.Client, prefix string) {
	t.Helper()
	s, rdb, prefix = emptyStock(t)
	if err := s.Load(context.Background(), 1, total, 1); err != nil {
		t.Fatal(err)
	}
	return s, rdb, prefix
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
