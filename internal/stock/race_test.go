package stock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

const (
	units   = 100 // stock on sale in the race tests
	workers = 64  // concurrent buyers, each buying until sold out
)

// sellOut starts workers goroutines that each call take until it reports sold
// out (0 units taken), and returns how many units were sold in total. take
// reports an error other than sold out by failing the test.
func sellOut(t *testing.T, take func(ctx context.Context) (sold int64, err error)) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		sold  atomic.Int64
		start = make(chan struct{})
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			<-start
			for {
				n, err := take(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				sold.Add(n)
			}
		})
	}
	close(start)
	wg.Wait()
	return sold.Load()
}

// checkSale is the invariant both race tests judge by: exactly the stock was
// sold and the counter ends at zero, not below.
func checkSale(sold, left int64) error {
	if sold != units || left != 0 {
		return fmt.Errorf("%d units on sale: sold %d, %d left in Redis", units, sold, left)
	}
	return nil
}

func TestDeductConcurrentSellsExactlyTheStock(t *testing.T) {
	s, _, _ := loadedStock(t, units)
	ctx := context.Background()
	var negative, fence atomic.Int64
	sold := sellOut(t, func(ctx context.Context) (int64, error) {
		// Grants of one to three units, as a busy sale's batches are.
		f := fence.Add(1)
		taken, left, err := deduct(ctx, s, 1, stock.Grant{Fence: f}, 1+f%3)
		if errors.Is(err, stock.ErrSoldOut) {
			return 0, nil
		}
		if left < 0 {
			negative.Add(1)
		}
		return taken, err
	})
	left, err := s.Remaining(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSale(sold, left); err != nil {
		t.Error(err)
	}
	if n := negative.Load(); n > 0 {
		t.Errorf("Deduct reported a negative remaining %d times", n)
	}
	t.Logf("%d buyers, %d units: sold %d, %d left", workers, units, sold, left)
}

// TestNaiveReadThenWriteOversells runs the seed incident's stock check (HGET,
// then HINCRBY when positive) under the same race and judge as the test above:
// it must be caught overselling, which shows the race test can fail.
func TestNaiveReadThenWriteOversells(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	key := keys.NewSpace(prefix).Stock(1)
	ctx := context.Background()
	naive := func(ctx context.Context) (int64, error) {
		left, err := rdb.HGet(ctx, key, "remaining").Int64()
		if err != nil || left <= 0 {
			return 0, err
		}
		return 1, rdb.HIncrBy(ctx, key, "remaining", -1).Err()
	}
	// A race can be lost by chance; a few rounds make a miss vanishingly rare.
	for round := 1; round <= 5; round++ {
		if err := rdb.HSet(ctx, key, "remaining", units).Err(); err != nil {
			t.Fatal(err)
		}
		sold := sellOut(t, naive)
		left, err := rdb.HGet(ctx, key, "remaining").Int64()
		if err != nil {
			t.Fatal(err)
		}
		if err := checkSale(sold, left); err != nil {
			t.Logf("round %d: the naive check oversold, as expected: %v", round, err)
			return
		}
	}
	t.Fatal("the naive read-then-write never oversold: the race test cannot tell a broken deduct from a correct one")
}
