package purchase_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Users of the mixed batch, by what the verification service and the
// database make of them.
const (
	blocker   = 1 // holds the batch before, so the others queue together
	approved  = 2
	approved2 = 3
	rejected  = 4 // the verification service says no
	slow      = 5 // the verification call outlives its deadline
	holder    = 6 // already holds an order, bought through another instance
	repeater  = 7 // sends the same purchase twice, with one Idempotency-Key
)

// mixedVerifier answers as the constants above say.
type mixedVerifier struct {
	entered, release chan struct{}
}

func (v mixedVerifier) Verify(ctx context.Context, userID, _ int64) error {
	switch userID {
	case blocker:
		v.entered <- struct{}{}
		<-v.release
	case rejected:
		return fmt.Errorf("user %d: %w", userID, usercheck.ErrRejected)
	case slow:
		<-ctx.Done()
		return fmt.Errorf("user %d: %w", userID, ctx.Err())
	}
	return nil
}

// realService is a purchase service on the real Redis and MariaDB.
func realService(t *testing.T, prefix, dsn string, users usercheck.Verifier) (wiring.Service, *order.Store) {
	return realServiceTTL(t, prefix, dsn, users, 2*time.Second)
}

// realServiceTTL is realService with a lock TTL of ttl.
func realServiceTTL(t *testing.T, prefix, dsn string, users usercheck.Verifier, ttl time.Duration) (wiring.Service, *order.Store) {
	t.Helper()
	return wiring.OnReal(t, testenv.Redis(t), dsn, app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: ttl, CallTimeout: ttl / 4, Wait: time.Minute}}, users, nil)
}

// One lock grant serves a batch whose buyers each end differently; each gets
// its own answer, exactly the right rows are written, and the units of those
// who bought nothing are never taken or go back.
func TestBatchWithMixedOutcomes(t *testing.T) {
	ctx := context.Background()
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	v := mixedVerifier{entered: make(chan struct{}, 1), release: make(chan struct{})}
	svc, orders := realService(t, prefix, dsn, v)
	other, _ := realService(t, prefix, dsn, usercheck.ApproveAll{})
	const total = 10
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "mixed", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	held, err := other.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: holder})
	if err != nil {
		t.Fatal(err)
	}

	type answer struct {
		user  int64
		order seckill.Order
		err   error
	}
	buy := func(user int64, key string) <-chan answer {
		c := make(chan answer, 1)
		go func() {
			o, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: user, IdempotencyKey: key})
			c <- answer{user, o, err}
		}()
		return c
	}
	first := buy(blocker, "")
	<-v.entered
	batch := []<-chan answer{buy(approved, ""), buy(approved2, ""), buy(rejected, ""), buy(slow, ""), buy(holder, ""), buy(repeater, "k-7"), buy(repeater, "k-7")}
	// The repeater's second request waits for its first, without a ticket.
	for deadline := time.Now().Add(20 * time.Second); svc.Queued(a.ID)+svc.WaitingRepeats() < len(batch); {
		if time.Now().After(deadline) {
			close(v.release)
			t.Fatalf("%d of %d buyers queued or waiting", svc.Queued(a.ID)+svc.WaitingRepeats(), len(batch))
		}
		time.Sleep(time.Millisecond)
	}
	close(v.release)
	if got := <-first; got.err != nil {
		t.Fatalf("the blocker's purchase: %v", got.err)
	}

	got := map[int64][]answer{}
	for _, c := range batch {
		r := <-c
		got[r.user] = append(got[r.user], r)
	}
	wantCode := map[int64]string{rejected: seckill.EUserRejected, slow: seckill.EUnavailable, holder: seckill.EAlreadyPurchased}
	for user, want := range wantCode {
		if c := code(got[user][0].err); c != want {
			t.Errorf("user %d: %v, want %s", user, got[user][0].err, want)
		}
	}
	var he *seckill.Error
	if errors.As(got[holder][0].err, &he) && he.OrderID != held.ID {
		t.Errorf("holder told already_purchased with order %q, want its order %q", he.OrderID, held.ID)
	}
	fences := map[int64]bool{}
	for _, user := range []int64{approved, approved2, repeater} {
		for _, r := range got[user] {
			if r.err != nil {
				t.Errorf("user %d: %v, want an order", user, r.err)
				continue
			}
			fences[r.order.Fence] = true
		}
	}
	if len(fences) != 1 {
		t.Errorf("orders of one batch written under fences %v, want one", fences)
	}
	if r := got[repeater]; len(r) == 2 && r[0].order.ID != r[1].order.ID {
		t.Errorf("the repeat with the same Idempotency-Key got order %s, the first %s: want the same", r[1].order.ID, r[0].order.ID)
	}

	// Rows: the holder's, the blocker's, approved, approved2 and the
	// repeater's one. Redis: exactly the other units.
	n, err := orders.Orders.CountOrders(ctx, a.ID)
	if err != nil || n != 5 {
		t.Errorf("%d orders (%v), want 5", n, err)
	}
	au, err := svc.Audit(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !au.Consistent || au.Orders != 5 || au.RedisRemaining != total-5 {
		t.Errorf("audit %+v: want 5 orders and %d left in Redis", au, total-5)
	}
	for _, user := range []int64{rejected, slow} {
		if _, err := orders.Orders.OrderByUser(ctx, a.ID, user); !errors.Is(err, order.ErrNotFound) {
			t.Errorf("user %d has an order row (%v), want none", user, err)
		}
	}
}

// A buyer whose 201 was lost asks again on another instance after the
// sell-out, with no Idempotency-Key: the contract's precedence says they are
// told already_purchased with their order, not sold_out ("you have no
// order"), both from the cheap sold-out answer and from inside a batch.
// Someone without an order still hears sold_out.
func TestHolderHearsAlreadyPurchasedAfterSellOut(t *testing.T) {
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	a, _ := realService(t, prefix, dsn, usercheck.ApproveAll{})
	b, _ := realService(t, prefix, dsn, usercheck.ApproveAll{})
	ctx := context.Background()
	now := time.Now()
	act, err := a.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 1, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	o, err := a.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Instance b learns of the sell-out inside the holder's own batch, then
	// answers from its sold-out mark.
	holder := func(how string) {
		t.Helper()
		_, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1})
		var e *seckill.Error
		if !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != o.ID || e.OrderStatus != seckill.OrderStatusCreated {
			t.Fatalf("the holder on another instance, %s: %v, want already_purchased with order %s, status created", how, err, o.ID)
		}
	}
	holder("in a batch")
	if _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Fatalf("a buyer without an order: %v, want sold_out", err)
	}
	holder("from the sold-out mark")
}

// One unit left, and a batch of two: a buyer who already holds an order
// (written on another instance) ahead of a newcomer. The holder must take no
// unit: deducted for them, the unit went back only after the database's
// unique key refused their order, and by then the newcomer had been told
// sold_out while a unit was free.
func TestHolderInABatchTakesNoUnitFromANewcomer(t *testing.T) {
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	a, _ := realService(t, prefix, dsn, usercheck.ApproveAll{})
	entered, release := make(chan struct{}), make(chan struct{})
	b, _ := realService(t, prefix, dsn, verifierFunc(func(_ context.Context, userID, _ int64) error {
		if userID == 99 {
			close(entered)
			<-release
		}
		return nil
	}))
	ctx := context.Background()
	now := time.Now()
	act, err := a.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 3, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	held, err := a.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1})
	if err != nil {
		t.Fatal(err)
	}
	buy := func(user int64) <-chan error {
		c := make(chan error, 1)
		go func() { _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: user}); c <- err }()
		return c
	}
	first := buy(99) // takes a unit; its batch holds b's queue meanwhile
	<-entered
	holder := buy(1)
	for b.Queued(act.ID) < 1 {
		time.Sleep(time.Millisecond)
	}
	newcomer := buy(2)
	for b.Queued(act.ID) < 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	var e *seckill.Error
	if err := <-holder; !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != held.ID {
		t.Fatalf("holder: %v, want already_purchased with %s", err, held.ID)
	}
	if err := <-newcomer; err != nil {
		t.Fatalf("newcomer: %v, want the last unit", err)
	}
}

// An acquire whose command failed (a timeout) and had not landed is Redis
// failing, not another instance holding the activity: the buyers hear 503
// unavailable, not 429 busy.
func TestFailedAcquireIsUnavailableNotBusy(t *testing.T) {
	prefix, dsn := testenv.Prefix(t), testenv.MySQLDSN(t)
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(dropAcquires{})
	svc, _ := wiring.OnReal(t, rdb, dsn, app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 100 * time.Millisecond, Wait: 50 * time.Millisecond}}, nil, nil)
	now := time.Now()
	act, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "x", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.EUnavailable {
		t.Fatalf("purchase while every acquire times out: %v, want unavailable", err)
	}
}

// dropAcquires fails every lock acquire (the one script naming a fence key)
// with a timeout, without sending it: a command lost on the way.
type dropAcquires struct{}

func (dropAcquires) DialHook(next redis.DialHook) redis.DialHook { return next }
func (dropAcquires) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (dropAcquires) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.HasSuffix(s, ":lock:fence") {
				err := fmt.Errorf("i/o timeout (dropped by the test): %w", context.DeadlineExceeded)
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}
