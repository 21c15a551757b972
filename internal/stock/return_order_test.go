package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestReturnOrderOnceAfterLostReply: an expired order's return whose reply
// is lost (Redis ran it, the reply came after the client's timeout) is
// retried, as the payment flow does; the receipt keyed by the order id makes
// the retry, and any later repeat, add nothing.
func TestReturnOrderOnceAfterLostReply(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	ctx := context.Background()
	if err := stock.New(rdb, keys.NewSpace(prefix)).Load(ctx, 1, 5, 7); err != nil {
		t.Fatal(err)
	}
	slow, proxy := testenv.ProxiedRedis(t, 100*time.Millisecond)
	s := stock.New(slow, keys.NewSpace(prefix))
	// The script must be in Redis's cache already, or the lost reply would be
	// EVALSHA's NOSCRIPT and the script would never run.
	if err := s.Load(ctx, 2, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReturnOrder(ctx, 2, "warm-up", 1, 1); err != nil {
		t.Fatal(err)
	}

	proxy.SetReplyDelay(time.Second) // the script runs; its reply arrives too late
	if _, err := s.ReturnOrder(ctx, 1, "order-a", 1, 7); err == nil {
		t.Fatal("ReturnOrder through a 1 s reply delay with a 100 ms read timeout succeeded; the fault was not injected")
	}
	proxy.SetReplyDelay(0)
	for range 3 {
		if _, err := s.ReturnOrder(ctx, 1, "order-a", 1, 7); !errors.Is(err, stock.ErrOrderReturned) {
			t.Errorf("retry of a return that landed: %v, want ErrOrderReturned", err)
		}
	}
	if left, err := s.Remaining(ctx, 1); err != nil || left != 6 {
		t.Errorf("Remaining = %d, %v; want 6: the expired order's unit back once", left, err)
	}
	// Another order's unit is its own.
	if left, err := s.ReturnOrder(ctx, 1, "order-b", 1, 7); err != nil || left != 7 {
		t.Errorf("ReturnOrder of another order = %d, %v; want 7", left, err)
	}
}

// TestReturnOrderAfterReloadIsStale: a stock reload after the epoch was read
// may have counted the unit as unsold already; the return adds nothing.
func TestReturnOrderAfterReloadIsStale(t *testing.T) {
	s, rdb, ks := emptyStock(t)
	ctx := context.Background()
	if _, err := s.ReturnOrder(ctx, 1, "order-a", 1, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Errorf("ReturnOrder with no stock: %v, want ErrNotLoaded", err)
	}
	if n, _ := rdb.Exists(ctx, ks.Stock(1)).Result(); n != 0 {
		t.Error("ReturnOrder created the stock key")
	}
	if err := s.Load(ctx, 1, 5, 3); err != nil {
		t.Fatal(err)
	}
	epoch, err := s.Epoch(ctx, 1)
	if err != nil || epoch != 3 {
		t.Fatalf("Epoch = %d, %v; want 3", epoch, err)
	}
	if err := s.Load(ctx, 1, 6, 4); err != nil { // the reload that counted the unit
		t.Fatal(err)
	}
	if _, err := s.ReturnOrder(ctx, 1, "order-a", 1, epoch); !errors.Is(err, stock.ErrStale) {
		t.Errorf("ReturnOrder after a reload: %v, want ErrStale", err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 6 {
		t.Errorf("Remaining = %d, want 6, as reloaded", left)
	}
}
