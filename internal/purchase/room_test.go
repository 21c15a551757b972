package purchase_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// roomWorld is the real Redis and MariaDB the instances of a room test
// share, with the clock they read.
func roomWorld(t *testing.T) (*redis.Client, string, *order.Store, *clock) {
	t.Helper()
	orders, err := order.Open(context.Background(), testenv.MySQLDSN(t), order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	return testenv.Redis(t), testenv.Prefix(t), orders, &clock{now: time.Now()}
}

// roomInstance is one service instance with waiting rooms on the shared
// real Redis and MariaDB, on the clock c.
func roomInstance(t *testing.T, rdb *redis.Client, prefix string, orders *order.Store, c *clock) wiring.Service {
	t.Helper()
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	svc, err := wiring.New(app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: c.Now}, Rooms: &waitingroom.Config{}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// admit gives the user an open admission of a minute, as the room's step
// would.
func admit(t *testing.T, rdb *redis.Client, prefix string, activityID, userID int64) {
	t.Helper()
	until := float64(time.Now().Add(time.Minute).UnixMilli())
	if err := rdb.ZAdd(context.Background(), keys.NewSpace(prefix).WaitingAdmitted(activityID), redis.Z{Score: until, Member: strconv.FormatInt(userID, 10)}).Err(); err != nil {
		t.Fatal(err)
	}
}

// An admitted buyer is never told sold_out from another instance's stale
// mark. Instance A sells the last unit and marks the activity sold out;
// ops add a unit through instance B; the room admits user 2, who buys on A
// while A's mark is fresh (A's clock stands still): the unit is sold.
// Can fail: answered from the mark (buy.go, batch.go), user 2 is told
// sold_out with a unit left in Redis and the admission still open.
func TestAdmittedBuyerIsNotToldSoldOutByAStaleMark(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	a, b := roomInstance(t, rdb, prefix, orders, c), roomInstance(t, rdb, prefix, orders, c)
	ctx := context.Background()
	now := c.Now()
	act, err := a.CreateActivity(ctx, seckill.Activity{Name: "room", TotalStock: 1, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	w := waitingroom.Window{OpensAt: act.WaitingRoom.OpensAt, StartsAt: act.StartsAt, EndsAt: act.EndsAt, Seed: act.WaitingRoom.Seed}
	if err := waitingroom.NewStore(rdb, keys.NewSpace(prefix), 0, 0).Open(ctx, act.ID, w); err != nil {
		t.Fatal(err)
	}
	admit(t, rdb, prefix, act.ID, 1)
	if _, err := a.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); err != nil {
		t.Fatalf("user 1, admitted, buys the one unit on A: %v", err)
	}
	if _, err := a.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 3}); code(err) != seckill.ENotAdmitted {
		t.Fatalf("user 3, not admitted: %v, want not_admitted", err)
	}
	if _, err := b.AdjustStock(ctx, act.ID, 2); err != nil {
		t.Fatalf("ops add a unit through B: %v", err)
	}
	admit(t, rdb, prefix, act.ID, 2)
	if _, err := a.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 2}); err != nil {
		t.Errorf("user 2, admitted for the unit ops added, buys on A: %v (%s), want an order", err, code(err))
	}
}

// The room never fails open: after Redis lost an activity's room (its keys
// gone, the stock still there), a buyer without an admission is answered
// 503, never sold to, until a stock change (or the sweep, or a reconcile)
// writes the room back from the database; then not_admitted.
// Can fail: with a lost room read as "no room", the buyer gets an order.
func TestLostRoomFailsClosedUntilRestored(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	svc := roomInstance(t, rdb, prefix, orders, c)
	ctx := context.Background()
	now := c.Now()
	act, err := svc.CreateActivity(ctx, seckill.Activity{Name: "room", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.ENotAdmitted {
		t.Fatalf("not admitted, room in Redis: %v, want not_admitted", err)
	}
	if err := rdb.Del(ctx, keys.NewSpace(prefix).WaitingRoom(act.ID), keys.NewSpace(prefix).WaitingAdmitted(act.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1})
		if code(err) != seckill.EUnavailable || !errors.Is(err, seckill.ErrRoomLost) {
			t.Fatalf("room lost from Redis: %v, want 503 unavailable (room lost)", err)
		}
	}
	if _, err := svc.AdjustStock(ctx, act.ID, 6); err != nil {
		t.Fatalf("ops change the stock: %v", err)
	}
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: act.ID, UserID: 1}); code(err) != seckill.ENotAdmitted {
		t.Errorf("after the stock change restored the room: %v, want not_admitted", err)
	}
	left, err := stock.New(rdb, keys.NewSpace(prefix)).Remaining(ctx, act.ID)
	if err != nil || left != 6 {
		t.Errorf("stock %d, %v: want 6, nothing sold", left, err)
	}
}
