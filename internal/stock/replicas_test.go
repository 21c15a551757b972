package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/stock"
)

// On the test's single Redis (no replicas): WAIT for none passes, WAIT for
// one times out with ErrNotReplicated, and a write that is not on the
// primary is ErrWriteGone whatever the replicas. The replicated cases run
// on Sentinel and the cluster in e2e (TestSentinelWaitReplicas,
// TestClusterSaleAcrossPrimaries).
func TestWaitForReplicas(t *testing.T) {
	s, rdb, ks := loadedStock(t, 5)
	ctx := context.Background()
	const id, fence = 1, 7
	if err := s.WaitDeduct(ctx, id, stock.Grant{Fence: fence}, 0, 10*time.Millisecond); !errors.Is(err, stock.ErrWriteGone) {
		t.Errorf("WaitDeduct before any deduct: %v, want ErrWriteGone", err)
	}
	if _, _, err := deduct(ctx, s, id, stock.Grant{Fence: fence}, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitDeduct(ctx, id, stock.Grant{Fence: fence}, 0, 10*time.Millisecond); err != nil {
		t.Errorf("WaitDeduct for 0 replicas: %v", err)
	}
	start := time.Now()
	if err := s.WaitDeduct(ctx, id, stock.Grant{Fence: fence}, 1, 50*time.Millisecond); !errors.Is(err, stock.ErrNotReplicated) {
		t.Errorf("WaitDeduct for 1 replica of a Redis without any: %v, want ErrNotReplicated", err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("WAIT returned after %v, before its 50ms timeout", waited)
	}
	lockValue := "owner:7"
	if err := rdb.Set(ctx, ks.Lock(id), lockValue, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitGrant(ctx, id, lockValue, 0, 10*time.Millisecond); err != nil {
		t.Errorf("WaitGrant of the held grant: %v", err)
	}
	if err := s.WaitGrant(ctx, id, "other:8", 0, 10*time.Millisecond); !errors.Is(err, stock.ErrWriteGone) {
		t.Errorf("WaitGrant of another's grant: %v, want ErrWriteGone", err)
	}
}
