package purchase_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

// Quantity per buyer (docs/API.md "Quantity per buyer"), on real Redis and
// MariaDB: units, not orders, are what the stock and the database count,
// and each test is one of the flaws flash-sale services are known for.

// quantityActivity creates an activity of total units with the per-user
// limit on svc.
func quantityActivity(t *testing.T, svc wiring.Service, c *clock, total, limit int64) int64 {
	t.Helper()
	now := c.Now()
	a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai, at most N", TotalStock: total, PerUserLimit: limit,
		StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// quantitySale is one instance on the room world (roomWorld) selling one
// activity, id, of total units at most limit a buyer; stock reads and
// writes the activity's Redis state directly.
type quantitySale struct {
	svc    wiring.Service
	orders *order.Store
	clock  *clock
	rdb    *redis.Client
	keys   keys.Space
	stock  *stock.Store
	id     int64
}

func newQuantitySale(t *testing.T, total, limit int64) quantitySale {
	t.Helper()
	rdb, prefix, orders, c := roomWorld(t)
	svc := roomInstance(t, rdb, prefix, orders, c)
	space := keys.NewSpace(prefix)
	return quantitySale{svc: svc, orders: orders, clock: c, rdb: rdb, keys: space,
		stock: stock.New(rdb, space), id: quantityActivity(t, svc, c, total, limit)}
}

// buy is user's order of quantity units of the sale.
func (s quantitySale) buy(ctx context.Context, user, quantity int64) (seckill.Order, error) {
	return s.svc.Buy(ctx, seckill.BuyRequest{ActivityID: s.id, UserID: user, Quantity: quantity})
}

// checkUnits is checkUnits of the sale's activity.
func (s quantitySale) checkUnits(t *testing.T, wantUnits, wantOrders int64) {
	t.Helper()
	checkUnits(t, s.svc, s.orders, s.id, wantUnits, wantOrders)
}

// checkUnits checks that the units the orders hold plus Redis's remaining
// make the total, that the audit counts units, and that the activity row's
// sold count is those units.
func checkUnits(t *testing.T, svc wiring.Service, orders *order.Store, id, wantUnits, wantOrders int64) {
	t.Helper()
	bs, err := orders.Activities.Books(context.Background(), id)
	if err != nil || len(bs) != 1 {
		t.Fatalf("books: %v, %v", bs, err)
	}
	if bs[0].Sold != bs[0].Held || bs[0].Held != wantUnits {
		t.Errorf("activities.sold %d, orders hold %d units; want both %d", bs[0].Sold, bs[0].Held, wantUnits)
	}
	a, err := svc.Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Units != wantUnits || a.Orders != wantOrders || !a.Consistent || a.Oversold {
		t.Errorf("audit: %d units in %d orders, %d in Redis of %d (consistent %v, oversold %v); want %d units in %d orders",
			a.Units, a.Orders, a.RedisRemaining, a.TotalStock, a.Consistent, a.Oversold, wantUnits, wantOrders)
	}
}

// An order of k takes k units in one step, and a buyer who asks for more
// than is left gets not_enough_stock with what is left, nothing sold; a
// smaller ask behind still gets its units.
// Can fail: a deduct that takes what is left (part of an ask) sells 1 of 2.
func TestAnOrderTakesAllItsUnitsOrNone(t *testing.T) {
	sale := newQuantitySale(t, 3, 5)
	ctx := context.Background()
	o, err := sale.buy(ctx, 1, 2)
	if err != nil || o.Quantity != 2 {
		t.Fatalf("user 1 asks for 2 of 3: %+v, %v; want an order of 2", o, err)
	}
	_, err = sale.buy(ctx, 2, 2)
	var e *seckill.Error
	if !errors.As(err, &e) || e.Code != seckill.ENotEnoughStock || e.RemainingStock != 1 {
		t.Fatalf("user 2 asks for 2 of the 1 left: %v, want not_enough_stock with remaining_stock 1", err)
	}
	if _, err := sale.buy(ctx, 3, 1); err != nil {
		t.Fatalf("user 3 asks for the 1 left: %v", err)
	}
	if _, err := sale.buy(ctx, 2, 1); code(err) != seckill.ESoldOut {
		t.Errorf("user 2 asks for 1 of none: %v, want sold_out", err)
	}
	sale.checkUnits(t, 3, 2)
}

// A batch of buyers with mixed quantities is one deduct: each gets all of
// theirs or none, in turn, and the units never pass the total.
// Can fail: a deduct or a claim that counts orders, not units, oversells.
func TestMixedQuantitiesInOneSaleNeverOversell(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	a, b := roomInstance(t, rdb, prefix, orders, c), roomInstance(t, rdb, prefix, orders, c)
	ctx := context.Background()
	id := quantityActivity(t, a, c, 20, 3)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sold int64
	)
	for user := int64(1); user <= 24; user++ {
		svc := a
		if user%2 == 0 {
			svc = b
		}
		wg.Go(func() {
			q := 1 + user%3
			o, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: id, UserID: user, Quantity: q})
			switch code(err) {
			case "":
				if o.Quantity != q {
					t.Errorf("user %d asked for %d, order of %d", user, q, o.Quantity)
				}
				mu.Lock()
				sold += o.Quantity
				mu.Unlock()
			case seckill.ESoldOut, seckill.ENotEnoughStock, seckill.EBusy:
			default:
				t.Errorf("user %d: %v", user, err)
			}
		})
	}
	wg.Wait()
	if sold > 20 {
		t.Fatalf("%d units sold of 20", sold)
	}
	a2, err := a.Audit(ctx, id)
	if err != nil || a2.Units != sold || !a2.Consistent {
		t.Errorf("audit %+v, %v: want %d units, consistent", a2, err, sold)
	}
}

// Peer flaw: the duplicate check after the decrement. A buyer who holds an
// order and asks again, for any quantity, is told already_purchased and
// takes nothing from the stock.
// Can fail: a deduct before the holders' check leaks units until a settle.
func TestAHolderAskingAgainTakesNoUnit(t *testing.T) {
	sale := newQuantitySale(t, 10, 3)
	ctx := context.Background()
	if _, err := sale.buy(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	before, err := sale.stock.Ledger(ctx, sale.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []int64{1, 2, 3} {
		if _, err := sale.buy(ctx, 1, q); code(err) != seckill.EAlreadyPurchased {
			t.Errorf("the holder asks for %d more: %v, want already_purchased", q, err)
		}
		if left, err := sale.stock.Remaining(ctx, sale.id); err != nil || left != 9 {
			t.Errorf("after the holder asked for %d more: %d left in Redis, %v; want 9", q, left, err)
		}
	}
	// Not even a deduct given back later: no grant deducted for the holder.
	if after, err := sale.stock.Ledger(ctx, sale.id); err != nil || len(after.Deducts) != len(before.Deducts) {
		t.Errorf("deduct receipts %d before the holder's asks, %d after (%v): units were taken and given back", len(before.Deducts), len(after.Deducts), err)
	}
	sale.checkUnits(t, 1, 1)
}

// Peer flaw: check-then-act between the user's set and the stock. One user
// buys on two instances at once with different quantities: one order, and
// the loser's units all go back.
// Can fail: without the database's one order per user, two orders; without
// the settle, the loser's units stay out of the stock.
func TestOneUserOnTwoInstancesGetsOneOrder(t *testing.T) {
	rdb, prefix, orders, c := roomWorld(t)
	a, b := roomInstance(t, rdb, prefix, orders, c), roomInstance(t, rdb, prefix, orders, c)
	ctx := context.Background()
	for round := range 5 {
		id := quantityActivity(t, a, c, 10, 3)
		var wg sync.WaitGroup
		got := make([]seckill.Order, 2)
		errs := make([]error, 2)
		for i, svc := range []wiring.Service{a, b} {
			wg.Go(func() {
				got[i], errs[i] = svc.Buy(ctx, seckill.BuyRequest{ActivityID: id, UserID: 7, Quantity: int64(2 + i)})
			})
		}
		wg.Wait()
		held, err := orders.Orders.OrdersByUsers(ctx, id, []int64{7})
		if err != nil {
			t.Fatal(err)
		}
		o, ok := held[7]
		if !ok {
			t.Fatalf("round %d: no order (%v, %v)", round, errs[0], errs[1])
		}
		for i, err := range errs {
			if err == nil && got[i].ID != o.ID {
				t.Errorf("round %d: instance %d sold order %s, the database holds %s", round, i, got[i].ID, o.ID)
			}
		}
		checkUnits(t, a, orders, id, o.Quantity, 1)
	}
}

// Peer flaw: a limit bypassed by the quantity field. A quantity above the
// activity's limit, or not a positive count, is invalid_request and sells
// nothing.
// Can fail: without the check against the activity's limit, 3 of limit 2
// are sold.
func TestQuantityAboveTheLimitIsRefused(t *testing.T) {
	sale := newQuantitySale(t, 10, 2)
	ctx := context.Background()
	one := quantityActivity(t, sale.svc, sale.clock, 10, 0) // the default: 1
	for _, r := range []seckill.BuyRequest{
		{ActivityID: sale.id, UserID: 1, Quantity: 3},
		{ActivityID: sale.id, UserID: 1, Quantity: -1},
		{ActivityID: one, UserID: 1, Quantity: 2},
	} {
		if _, err := sale.svc.Buy(ctx, r); code(err) != seckill.EInvalid {
			t.Errorf("%+v: %v, want invalid_request", r, err)
		}
	}
	sale.checkUnits(t, 0, 0)
	checkUnits(t, sale.svc, sale.orders, one, 0, 0)
	if o, err := sale.buy(ctx, 1, 2); err != nil || o.Quantity != 2 {
		t.Fatalf("2 of limit 2: %+v, %v", o, err)
	}
	if _, err := sale.buy(ctx, 1, 1); code(err) != seckill.EAlreadyPurchased {
		t.Errorf("one more after 2 of limit 2: %v, want already_purchased", err)
	}
	sale.checkUnits(t, 2, 1)
}

// Peer flaw: an unpaid order that stops counting toward the limit. An order
// of k that expires gives its k units back, all and once, and stays the
// buyer's one order: buying again is already_purchased.
// Can fail: giving back one unit of k loses k-1; forgetting the expired
// order lets its buyer buy the limit again.
func TestAnExpiredOrderGivesBackAllItsUnitsAndStillCounts(t *testing.T) {
	sale := newQuantitySale(t, 5, 3)
	ctx := context.Background()
	o, err := sale.buy(ctx, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := sale.stock.Epoch(ctx, sale.id)
	if err != nil {
		t.Fatal(err)
	}
	if err := sale.orders.Orders.ChangeStatus(ctx, order.StatusChange{OrderID: o.ID, ActivityID: sale.id, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 1}); err != nil {
		t.Fatal(err)
	}
	expired, err := sale.orders.Orders.OrderByID(ctx, o.ID)
	if err != nil || expired.Units() != 3 {
		t.Fatalf("the expired order read back: %+v, %v; want 3 units", expired, err)
	}
	for range 2 { // a retry gives nothing more
		if _, err := sale.stock.ReturnOrder(ctx, sale.id, o.ID, expired.Units(), epoch); err != nil && !errors.Is(err, stock.ErrOrderReturned) {
			t.Fatal(err)
		}
	}
	sale.checkUnits(t, 0, 0)
	if left, err := sale.stock.Remaining(ctx, sale.id); err != nil || left != 5 {
		t.Errorf("after the expiry: %d left, %v; want all 5 back", left, err)
	}
	if _, err := sale.buy(ctx, 1, 3); code(err) != seckill.EAlreadyPurchased {
		t.Errorf("the buyer of the expired order buys again: %v, want already_purchased", err)
	}
}
