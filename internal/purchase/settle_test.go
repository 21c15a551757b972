package purchase

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// resolveFixture is a service on the real Redis and MariaDB, the database
// reached through a fault proxy, and an activity of total units.
func resolveFixture(t *testing.T, total int64) (*Service, *toxic.Proxy, seckill.Activity) {
	t.Helper()
	s, p, a, _ := resolveFixtureDSN(t, total)
	return s, p, a
}

// resolveFixtureDSN is resolveFixture, and the database's DSN without the
// proxy.
func resolveFixtureDSN(t *testing.T, total int64) (*Service, *toxic.Proxy, seckill.Activity, string) {
	t.Helper()
	dsn := testenv.MySQLDSN(t)
	cfg, p := testenv.ProxiedMySQL(t, testenv.MySQLConfig(t, dsn))
	cfg.Timeout = 300 * time.Millisecond
	s, a := serviceOn(t, cfg, total)
	return s, p, a, dsn
}

// serviceOn is a service on the real Redis and the database cfg names, with
// an activity of total units (its stock not loaded).
func serviceOn(t *testing.T, cfg *mysql.Config, total int64) (*Service, seckill.Activity) {
	t.Helper()
	s := instanceOn(t, cfg, keys.NewSpace(testenv.Prefix(t)), time.Second)
	now := time.Now()
	a, err := s.orders.Activities.CreateActivity(context.Background(), seckill.Activity{Name: "x", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return s, a
}

// instanceOn is a service instance on the real Redis, under prefix, and the
// database cfg names, with a lease of lockTTL.
func instanceOn(t *testing.T, cfg *mysql.Config, space keys.Space, lockTTL time.Duration) *Service {
	t.Helper()
	orders, err := order.Open(context.Background(), cfg.FormatDSN(), order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	rdb := testenv.Redis(t)
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	s, err := New(Config{Lease: lock.Policy{TTL: lockTTL, CallTimeout: 100 * time.Millisecond}},
		Deps{Locks: locks, Stock: stock.New(rdb, space), Orders: orders, Catalog: catalog.New(orders, nil), Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	serviceRedis.Store(s, rdb)
	return s
}

// A batch's COMMIT answered with an error, but it had committed: each buyer
// is answered as if it had answered, not 503 for all. Here 4 buyers had 4
// units deducted in Redis, the database had 2 units left: users 1 and 2 were
// written, user 3 already held an order (a unique key kept it out), user 4
// had no unit in the database. 1 and 2 get their orders, 3 already_purchased,
// 4 sold_out; 3's unit goes back, 4's stays deducted (Redis had too many).
func TestUnknownCommitThatLandedAnswersEachBuyer(t *testing.T) {
	s, _, a := resolveFixture(t, 3)
	ctx := context.Background()
	if err := s.stock.Load(ctx, a.ID, 5, 1); err != nil { // one unit more than the truth, for user 4
		t.Fatal(err)
	}
	heldBatch, err := s.orders.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 3}})
	if err != nil || len(heldBatch.Written) != 1 {
		t.Fatalf("user 3's order: %+v, %v", heldBatch, err)
	}
	held := heldBatch.Written[0]
	g := stock.Grant{Fence: 2, Token: "t"}
	if _, taken, _, err := s.stock.DeductEach(ctx, a.ID, g, []int64{1, 2, 3, 4}, []int64{1, 1, 1, 1}); err != nil || taken != 4 {
		t.Fatalf("deduct: %d, %v", taken, err)
	}
	ords := []seckill.Order{{ID: newOrderID(), UserID: 1}, {ID: newOrderID(), UserID: 2}, {ID: newOrderID(), UserID: 3}, {ID: newOrderID(), UserID: 4}}
	b, err := s.orders.Orders.CreateOrders(ctx, a.ID, g.Fence, ords)
	if err != nil || len(b.Written) != 2 {
		t.Fatalf("the batch's write: %+v, %v", b, err)
	}
	rb := &batch{activity: a, outs: make([]outcome, 4)}
	(&deductedBatch{s: s, b: rb, in: []int{0, 1, 2, 3}, g: grant{lease: ctx, stock: g}, d: deducted{orders: ords}}).resolveCommit(order.ErrCommitUnknown)
	outs := rb.outs

	for i, want := range []string{"", "", seckill.EAlreadyPurchased, seckill.ESoldOut} {
		var e *seckill.Error
		switch {
		case want == "" && (outs[i].err != nil || outs[i].order.ID != ords[i].ID):
			t.Errorf("user %d: %+v, want order %s", i+1, outs[i], ords[i].ID)
		case want != "" && (!errors.As(outs[i].err, &e) || e.Code != want):
			t.Errorf("user %d: %v, want %s", i+1, outs[i].err, want)
		}
	}
	var e *seckill.Error
	if errors.As(outs[2].err, &e) && e.OrderID != held.ID {
		t.Errorf("user 3 told of order %s, holds %s", e.OrderID, held.ID)
	}
	if left, _ := s.stock.Remaining(ctx, a.ID); left != 2 {
		t.Errorf("Redis remaining %d, want 2 (5 - 4 + user 3's unit back)", left)
	}
}

// When the outcome cannot be learned (the database stays unreachable), the
// buyers are told 503 outcome_unknown, and the units stay deducted: the
// books sweep returns them once it can tell.
func TestUnknownCommitUnresolvedIsOutcomeUnknown(t *testing.T) {
	s, p, a := resolveFixture(t, 3)
	ctx := context.Background()
	if err := s.stock.Load(ctx, a.ID, 3, 1); err != nil {
		t.Fatal(err)
	}
	g := stock.Grant{Fence: 2, Token: "t"}
	if _, _, _, err := s.stock.DeductEach(ctx, a.ID, g, []int64{1, 2}, []int64{1, 1}); err != nil {
		t.Fatal(err)
	}
	ords := []seckill.Order{{ID: newOrderID(), UserID: 1}, {ID: newOrderID(), UserID: 2}}
	if err := p.SetDown(true); err != nil {
		t.Fatal(err)
	}
	rb := &batch{activity: a, outs: make([]outcome, 2)}
	(&deductedBatch{s: s, b: rb, in: []int{0, 1}, g: grant{lease: ctx, stock: g}, d: deducted{orders: ords}}).resolveCommit(order.ErrCommitUnknown)
	outs := rb.outs
	if err := p.SetDown(false); err != nil {
		t.Fatal(err)
	}
	for i, out := range outs {
		var e *seckill.Error
		if !errors.As(out.err, &e) || e.Code != seckill.EOutcomeUnknown {
			t.Errorf("user %d: %v, want outcome_unknown", i+1, out.err)
		}
	}
	if left, _ := s.stock.Remaining(ctx, a.ID); left != 1 {
		t.Errorf("Redis remaining %d, want 1: the units stay deducted until the outcome is known", left)
	}
}

// A batch whose COMMIT answered with an error had committed, and learning it
// took longer than one detached look-up (2 s): the activity's row was held
// 2.5 s, as by a COMMIT that lands late. The buyers its orders left out are
// still answered exactly: user 3, who holds an order, already_purchased;
// user 4, for whom the database had no unit, sold_out.
//
// Can fail: with the answers read on the context made before the look-up,
// users 3 and 4 are told "the order database failed; nothing was sold".
func TestUnknownCommitLearnedLateAnswersEachBuyer(t *testing.T) {
	s, _, a, dsn := resolveFixtureDSN(t, 3)
	ctx := context.Background()
	if err := s.stock.Load(ctx, a.ID, 5, 1); err != nil {
		t.Fatal(err)
	}
	if b, err := s.orders.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 3}}); err != nil || len(b.Written) != 1 {
		t.Fatalf("user 3's order: %+v, %v", b, err)
	}
	g := stock.Grant{Fence: 2, Token: "t"}
	if _, taken, _, err := s.stock.DeductEach(ctx, a.ID, g, []int64{1, 2, 3, 4}, []int64{1, 1, 1, 1}); err != nil || taken != 4 {
		t.Fatalf("deduct: %d, %v", taken, err)
	}
	ords := []seckill.Order{{ID: newOrderID(), UserID: 1}, {ID: newOrderID(), UserID: 2}, {ID: newOrderID(), UserID: 3}, {ID: newOrderID(), UserID: 4}}
	if b, err := s.orders.Orders.CreateOrders(ctx, a.ID, g.Fence, ords); err != nil || len(b.Written) != 2 {
		t.Fatalf("the batch's write: %+v, %v", b, err)
	}
	testenv.HoldRow(t, dsn, a.ID, lock.DetachedTimeout+500*time.Millisecond)
	rb := &batch{activity: a, outs: make([]outcome, 4)}
	(&deductedBatch{s: s, b: rb, in: []int{0, 1, 2, 3}, g: grant{lease: ctx, stock: g}, d: deducted{orders: ords}}).resolveCommit(order.ErrCommitUnknown)
	for i, want := range []string{"", "", seckill.EAlreadyPurchased, seckill.ESoldOut} {
		var e *seckill.Error
		out := rb.outs[i]
		switch {
		case want == "" && (out.err != nil || out.order.ID != ords[i].ID):
			t.Errorf("user %d: %+v, want order %s", i+1, out, ords[i].ID)
		case want != "" && (!errors.As(out.err, &e) || e.Code != want):
			t.Errorf("user %d: %v, want %s", i+1, out.err, want)
		}
	}
	if left, _ := s.stock.Remaining(ctx, a.ID); left != 2 {
		t.Errorf("Redis remaining %d, want 2 (5 - 4 + user 3's unit back)", left)
	}
}

// A batch's COMMIT answered at the very end of its lease: the buyer a
// unique key kept out is still told why (already_purchased), not 503.
//
// Can fail: with the look-up made on the lease, "the order database did not
// answer; nothing was sold".
func TestCommitAtTheLeasesEndExplainsTheKeptOut(t *testing.T) {
	s, _, a := resolveFixture(t, 3)
	ctx := context.Background()
	heldBatch, err := s.orders.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 3}})
	if err != nil || len(heldBatch.Written) != 1 {
		t.Fatalf("user 3's order: %+v, %v", heldBatch, err)
	}
	held := heldBatch.Written[0]
	kept := seckill.Order{ID: newOrderID(), ActivityID: a.ID, UserID: 3}
	b := newBatch(a, []*ticket{newTicket(seckill.BuyRequest{ActivityID: a.ID, UserID: 3})})
	lease, cancel := context.WithCancel(ctx)
	cancel() // the lease is over when the answer is looked up
	b.record(nil, s.sell.answerWritten(lease, a.ID, []int{0}, deducted{orders: []seckill.Order{kept}}, order.Batch{KeptOut: []seckill.Order{kept}}))
	var e *seckill.Error
	if !errors.As(b.outs[0].err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != held.ID {
		t.Errorf("kept-out buyer: %+v, want already_purchased of %s", b.outs[0], held.ID)
	}
}
