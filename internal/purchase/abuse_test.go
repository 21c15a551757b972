package purchase_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Abuse limits: what one user id can make the service spend.

// 100 concurrent purchases by one user hold one queue slot, not 100: the
// others wait for the one in flight, and the answers are the contract's
// (one order, 99 already_purchased naming it).
func TestConcurrentRepeatsOfOneBuyerHoldOneQueueSlot(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	users := verifierFunc(func(context.Context, int64, int64) error {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release
		}
		return nil
	})
	svc, _ := realService(t, testenv.Prefix(t), testenv.MySQLDSN(t), users)
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "one user", TotalStock: 10, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	type answer struct {
		order seckill.Order
		err   error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			o, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 7})
			answers <- answer{o, err}
		}()
	}
	<-entered
	// Every request holds a ticket or waits for the one in flight.
	for deadline := time.Now().Add(20 * time.Second); svc.Tickets()+svc.WaitingRepeats() < n; {
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d tickets and %d requests waiting for the purchase in flight, want %d in all", svc.Tickets(), svc.WaitingRepeats(), n)
		}
		time.Sleep(time.Millisecond)
	}
	if got := svc.Tickets(); got != 1 {
		t.Errorf("%d concurrent requests of one user hold %d tickets (queue slots or batch places), want 1", n, got)
	}
	close(release)
	var created []seckill.Order
	var already []string
	for range n {
		r := <-answers
		var e *seckill.Error
		switch {
		case r.err == nil:
			created = append(created, r.order)
		case errors.As(r.err, &e) && e.Code == seckill.EAlreadyPurchased:
			already = append(already, e.OrderID)
		default:
			t.Errorf("answer %v, want an order or already_purchased", r.err)
		}
	}
	if len(created) != 1 || len(already) != n-1 {
		t.Fatalf("%d orders and %d already_purchased, want 1 and %d", len(created), len(already), n-1)
	}
	for _, id := range already {
		if id != created[0].ID {
			t.Fatalf("already_purchased names order %q, want %q", id, created[0].ID)
		}
	}
}

// A user who bought and then sends fresh Idempotency-Keys costs no look-up
// by key each: the in-process memory of its order answers first. Its own
// key still replays its order.
func TestBoughtBuyerWithFreshKeysCostsNoKeyLookup(t *testing.T) {
	ctx := context.Background()
	svc, _ := realService(t, testenv.Prefix(t), testenv.MySQLDSN(t), usercheck.ApproveAll{})
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "fresh keys", TotalStock: 10, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 9, IdempotencyKey: "k-first"})
	if err != nil {
		t.Fatal(err)
	}
	var lookups atomic.Int64
	svc.CountKeyLookups(&lookups)
	for i := range 50 {
		_, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 9, IdempotencyKey: fmt.Sprintf("k-%d", i)})
		var e *seckill.Error
		if !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != first.ID || e.OrderStatus != seckill.OrderStatusCreated {
			t.Fatalf("fresh key %d: %v, want already_purchased naming %s (created)", i, err, first.ID)
		}
	}
	if n := lookups.Load(); n != 0 {
		t.Errorf("50 fresh keys of a user who bought cost %d look-ups by key, want 0", n)
	}
	again, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 9, IdempotencyKey: "k-first"})
	if err != nil || again.ID != first.ID || again.Status != seckill.OrderStatusCreated {
		t.Errorf("repeat of the first key: %+v, %v; want order %s again", again, err, first.ID)
	}
}

// A rejected user's retries within a few seconds are told the same
// rejection without a call to the user service each; later it is asked
// again.
func TestRejectedBuyerIsRememberedBriefly(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int64
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: f.clock.Now}}, app.Deps{Redis: f.rdb, Locks: lock.New(f.rdb, nil), Orders: f.orders, Users: verifierFunc(func(context.Context, int64, int64) error {
		calls.Add(1)
		return &usercheck.RejectedError{Reason: "account under review"}
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := f.clock.Now()
	a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "rejected", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range 10 {
		_, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 4})
		var e *seckill.Error
		if !errors.As(err, &e) || e.Code != seckill.EUserRejected {
			t.Fatalf("attempt %d: %v, want user_rejected", i, err)
		}
		if i == 0 {
			first = e.Message
		} else if e.Message != first {
			t.Errorf("attempt %d told %q, want the first rejection %q", i, e.Message, first)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("10 attempts of a rejected user made %d user-service calls, want 1", n)
	}
	f.clock.Add(5 * time.Second)
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 4}); code(err) != seckill.EUserRejected {
		t.Fatalf("after 5 s: %v, want user_rejected", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("after 5 s the user service was called %d times in all, want 2 (asked again)", n)
	}
}

// Concurrent repeats with one Idempotency-Key all get the one order.
func TestConcurrentRepeatsOfOneKeyGetTheOneOrder(t *testing.T) {
	ctx := context.Background()
	svc, _ := realService(t, testenv.Prefix(t), testenv.MySQLDSN(t), usercheck.ApproveAll{})
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "one key", TotalStock: 10, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	ids := make(chan string, n)
	for range n {
		go func() {
			o, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 8, IdempotencyKey: "k-same"})
			if err != nil {
				t.Errorf("repeat of one key: %v, want the order", err)
			}
			ids <- o.ID
		}()
	}
	first := <-ids
	for range n - 1 {
		if id := <-ids; id != first {
			t.Errorf("repeat of one key got order %q, want %q", id, first)
		}
	}
}
