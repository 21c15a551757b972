package purchase_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Reconciling a big activity after Redis lost its stock reads the units sold
// from the activity's row under the lock, not a count of its orders: with
// 2,000,000 orders a COUNT(*) takes 0.9-1.4 s on this machine, and a preload
// that fails exactly when Redis lost its data leaves the sale down. The
// reconciling instance runs with a 500 ms read timeout on its database
// connections, which a count of that size cannot meet (and a 300 ms lease,
// renewed while it works).
//
// Can fail: reconciling by CountOrders instead of ClaimFence's sold (as it
// was) fails on the read timeout during the count.
func TestReconcileOfTwoMillionOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("bulk-inserts 2,000,000 orders")
	}
	ctx := context.Background()
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	svc, _ := realServiceTTL(t, prefix, dsn, usercheck.ApproveAll{}, 300*time.Millisecond)
	const orders, left = 2_000_000, 100
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "big", TotalStock: orders + left, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	began := time.Now()
	// MariaDB's sequence engine makes the rows in one statement; sold is
	// kept with them, as every order write does.
	if _, err := db.ExecContext(ctx, `INSERT INTO orders (id, activity_id, user_id, status, fence, created_at)
		SELECT CONCAT('bulk-', seq), ?, seq, 'created', 0, UTC_TIMESTAMP(6) FROM seq_1_to_2000000`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE activities SET sold = ? WHERE id = ?`, orders, a.ID); err != nil {
		t.Fatal(err)
	}
	t.Logf("bulk-inserted %d orders in %v", orders, time.Since(began).Round(time.Millisecond))

	// Redis loses the stock; the operator preloads, through an instance
	// whose database calls time out after 500 ms.
	if err := testenv.Redis(t).Del(ctx, stock.Key(prefix, a.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReadTimeout = 500 * time.Millisecond
	ops, _ := realServiceTTL(t, prefix, cfg.FormatDSN(), usercheck.ApproveAll{}, 300*time.Millisecond)
	began = time.Now()
	r, err := ops.Reconcile(ctx, a.ID)
	if err != nil {
		t.Fatalf("reconcile of an activity with %d orders under a 300 ms lease: %v", orders, err)
	}
	if r.Orders != orders || r.After != left || r.Before != -1 {
		t.Errorf("reconciliation %+v, want %d orders, nothing loaded before and %d after", r, orders, left)
	}
	t.Logf("reconciled in %v: %+v", time.Since(began).Round(time.Millisecond), r)
	if _, err := svc.Buy(ctx, purchase.BuyRequest{ActivityID: a.ID, UserID: orders + 1}); err != nil {
		t.Errorf("purchase after the reload: %v", err)
	}
}
