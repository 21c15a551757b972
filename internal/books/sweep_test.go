package books_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

// A dead process's batch left 3 units deducted in Redis with no order, and
// 2 orders were sold properly: the sweep returns exactly the 3, on its own,
// counts them, and never touches the 2 that were sold.
//
// Can fail: with BooksSweep 0 (no sweep) "Redis remaining 5 after 10 s, want 8".
func TestBooksSweepReturnsWhatACrashLeftDeducted(t *testing.T) {
	ctx := context.Background()
	rdb, prefix, dsn := testenv.Redis(t), testenv.Prefix(t), testenv.MySQLDSN(t)
	reg := prometheus.NewRegistry()
	svc, _ := wiring.OnReal(t, rdb, dsn, app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Books: books.Config{BooksSweep: 100 * time.Millisecond, BooksAfterEnd: time.Hour}}, nil, reg)
	st := stock.New(rdb, keys.NewSpace(prefix))
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 10, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u <= 2; u++ {
		if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: u}); err != nil {
			t.Fatal(err)
		}
	}
	// The dead batch: a deduct under a grant that never wrote its orders.
	if _, _, _, err := st.DeductEach(ctx, a.ID, stock.Grant{Fence: 1_000, Token: "dead"}, []int64{3, 4, 5}, []int64{1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, err := st.Remaining(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if left == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis remaining %d after 10 s, want 8", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// More sweeps change nothing more: the sold units stay sold.
	time.Sleep(500 * time.Millisecond)
	if left, _ := st.Remaining(ctx, a.ID); left != 8 {
		t.Fatalf("Redis remaining %d after more sweeps, want 8", left)
	}
	if got := testenv.Metric(t, reg, "seckill_books_repaired_units_total", map[string]string{"reason": "redis_low"}); got != 3 {
		t.Errorf("repaired units counted %v, want 3", got)
	}
}
