package purchase_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// roomSale creates, on svc, an activity on sale with an open waiting room
// of total units, the room written to Redis.
func roomSale(t *testing.T, svc wiring.Service, rdb *redis.Client, prefix string, now time.Time, total int64) seckill.ActivityView {
	t.Helper()
	act, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "room", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	w := waitingroom.Window{OpensAt: act.WaitingRoom.OpensAt, StartsAt: act.StartsAt, EndsAt: act.EndsAt, Seed: act.WaitingRoom.Seed}
	if err := waitingroom.NewStore(rdb, keys.NewSpace(prefix), 0, 0).Open(context.Background(), act.ID, w); err != nil {
		t.Fatal(err)
	}
	return act
}

// A paused or ended sale with a waiting room answers paused (ended) from
// the stop's answer on, on every instance, before not_admitted: the
// contract puts the stop after the window answers and before everything
// else but already_purchased. Ops stop the sale through A; B has seen
// nothing, and A's own mark is more than a second old.
// Can fail: with the admission checked before the sale's stop flags (read
// on the purchase path only by the deduct and a 1-s mark), a buyer without
// an admission is told not_admitted and sent to a queue that is paused.
func TestStoppedRoomSaleAnswersTheStopBeforeNotAdmitted(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	a, b := roomInstance(t, rdb, prefix, orders, c), roomInstance(t, rdb, prefix, orders, c)
	ctx := context.Background()
	act := roomSale(t, a, rdb, prefix, c.Now(), 5)
	admit(t, rdb, prefix, act.ID, 1)
	if _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); err != nil {
		t.Fatalf("user 1, admitted, buys on B: %v", err)
	}
	if _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); code(err) != seckill.ENotAdmitted {
		t.Fatalf("user 2, not admitted, before the pause: %v, want not_admitted", err)
	}
	if _, err := a.Pause(ctx, act.ID); err != nil {
		t.Fatal(err)
	}
	c.Add(2 * time.Second) // A's own mark is stale
	for name, svc := range map[string]wiring.Service{"A": a, "B": b} {
		if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); code(err) != seckill.EPaused {
			t.Errorf("user 2, not admitted, on %s while paused: %v (%s), want paused", name, err, code(err))
		}
		if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.EAlreadyPurchased {
			t.Errorf("user 1, a holder, on %s while paused: %v, want already_purchased", name, err)
		}
	}
	if _, err := a.Resume(ctx, act.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); code(err) != seckill.ENotAdmitted {
		t.Errorf("user 2 on B after the resume: %v, want not_admitted", err)
	}
	if _, err := a.End(ctx, act.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); code(err) != seckill.EEnded {
		t.Errorf("user 2, not admitted, on B after the end: %v (%s), want ended", err, code(err))
	}
}

// A buyer the user check rejected a moment ago, whose admission that
// rejection used up, is told not_admitted, not user_rejected: the contract
// puts the waiting room's answer before the user check's.
// Can fail: with this instance's memory of the rejection asked before the
// room, the buyer hears user_rejected.
func TestRejectedBuyerWithoutAnAdmissionIsNotAdmitted(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	reject := verifierFunc(func(context.Context, int64, int64) error { return &usercheck.RejectedError{Reason: "blocked"} })
	svc, err := wiring.New(app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: c.Now}, Rooms: &waitingroom.Config{}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: reject})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx := context.Background()
	act := roomSale(t, svc, rdb, prefix, c.Now(), 5)
	admit(t, rdb, prefix, act.ID, 1)
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.EUserRejected {
		t.Fatalf("user 1, admitted, rejected by the user check: %v, want user_rejected", err)
	}
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.ENotAdmitted {
		t.Errorf("user 1 again, the admission used up: %v (%s), want not_admitted", err, code(err))
	}
}
