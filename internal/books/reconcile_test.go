package books_test

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

// reconcileService is a service on the real stores with a 300 ms lease.
func reconcileService(t *testing.T, prefix, dsn string) (wiring.Service, *order.Store) {
	return wiring.OnReal(t, testenv.Redis(t), dsn, app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: 300 * time.Millisecond, CallTimeout: 75 * time.Millisecond, Wait: time.Minute}}, nil, nil)
}

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
	svc, _ := reconcileService(t, prefix, dsn)
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
	if err := testenv.Redis(t).Del(ctx, keys.NewSpace(prefix).Stock(a.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	cfg := testenv.MySQLConfig(t, dsn)
	cfg.ReadTimeout = 500 * time.Millisecond
	ops, _ := reconcileService(t, prefix, cfg.FormatDSN())
	began = time.Now()
	r, err := ops.Reconcile(ctx, a.ID)
	if err != nil {
		t.Fatalf("reconcile of an activity with %d orders under a 300 ms lease: %v", orders, err)
	}
	if r.Orders != orders || r.After != left || r.Before != -1 {
		t.Errorf("reconciliation %+v, want %d orders, nothing loaded before and %d after", r, orders, left)
	}
	t.Logf("reconciled in %v: %+v", time.Since(began).Round(time.Millisecond), r)
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: orders + 1}); err != nil {
		t.Errorf("purchase after the reload: %v", err)
	}
}

// A reconcile's load must change nothing when it reaches Redis after the
// reconciler's lease ended and a newer holder deducted (the load is checked
// against the lock in the same script, LoadIfHeld), or the newer holder's
// deduct would be overwritten and its unit sold twice.
//
// Deterministic: a hook on the reconciler's Redis client holds its load (its
// one write naming the stock key) once the reconciler
// sends it, fails its lease renewals meanwhile, so the lease runs out in
// Redis, and lets the load go on, detached from the ended lease as a command
// already on the wire would be, only after a newer holder deducted.
//
// Can fail: with a plain Load (HSET) instead of LoadIfHeld, "Redis remaining
// 100 after the late load, want 99: it overwrote the newer holder's deduct".
func TestReconcileLoadLandingAfterItsLease(t *testing.T) {
	ctx := context.Background()
	direct, prefix, dsn := testenv.Redis(t), testenv.Prefix(t), testenv.MySQLDSN(t)
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	stalled := redis.NewClient(opt)
	t.Cleanup(func() { _ = stalled.Close() })
	svc, _ := wiring.OnReal(t, stalled, dsn, app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: 300 * time.Millisecond, CallTimeout: 50 * time.Millisecond}}, nil, nil)
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "stalled", TotalStock: 100, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	key := keys.NewSpace(prefix).Lock(a.ID)
	hold := &loadHold{stockKey: keys.NewSpace(prefix).Stock(a.ID), lockKey: key, held: make(chan struct{}), release: make(chan struct{}), landed: make(chan struct{})}
	stalled.AddHook(hold)
	directLocks := lock.New(direct, nil)
	defer directLocks.Close()
	directStock := stock.New(direct, keys.NewSpace(prefix))
	if err := directStock.Load(ctx, a.ID, 100, 0); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { _, err := svc.Reconcile(ctx, a.ID); done <- err }()
	select {
	case <-hold.held:
	case err := <-done:
		t.Fatalf("the reconcile ended before it sent its load: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the reconcile sent no load within 30 s")
	}
	waitKey(t, direct, key, false) // its lease ran out in Redis
	newer, err := directLocks.Obtain(ctx, key, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Release(ctx)
	if _, _, _, err := directStock.DeductEach(ctx, a.ID, stock.Grant{Fence: newer.Fence(), Token: newer.Value()}, []int64{1}, []int64{1}); err != nil {
		t.Fatal(err)
	}
	close(hold.release) // the load lands now, after the newer holder's deduct
	rerr := <-done
	<-hold.landed
	left, err := directStock.Remaining(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if left != 99 {
		t.Fatalf("Redis remaining %d after the late load, want 99: it overwrote the newer holder's deduct", left)
	}
	if rerr == nil {
		t.Fatal("the reconcile reported success for a load that landed after its lease")
	}
	t.Logf("the load sent under the lease landed after it and changed nothing (%v)", rerr)
}

// loadHold holds the reconciler's load (its one write naming the stock key)
// until release, failing every other command on the lock key
// meanwhile (the lease's renewals), then runs it detached from the caller's
// context, as a command already sent would land.
type loadHold struct {
	stockKey, lockKey string
	stalling          atomic.Bool
	held, release     chan struct{}
	landed            chan struct{}
}

func (h *loadHold) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *loadHold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *loadHold) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		names := func(k string) bool {
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && s == k {
					return true
				}
			}
			return false
		}
		switch {
		case names(h.stockKey) && cmd.Name() != "hget" && h.stalling.CompareAndSwap(false, true):
			close(h.held)
			<-h.release
			defer close(h.landed)
			return next(context.WithoutCancel(ctx), cmd)
		case h.stalling.Load() && names(h.lockKey):
			err := errors.New("test: the link to Redis is stalled")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// waitKey waits until key exists (or, with exists false, is gone).
func waitKey(t *testing.T, rdb redis.UniversalClient, key string, exists bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); (rdb.Exists(context.Background(), key).Val() == 1) != exists; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("key %s exists=%v for 20 s", key, !exists)
		}
	}
}
