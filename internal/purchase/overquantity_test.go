package purchase_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill-oss/seckill"
)

// When Redis holds more units than the database (a failover lost the last
// deduct), the database refuses an order of k as over when fewer than k are
// left; fewer than k can still be more than none. Redis must keep deducted
// only the excess it had over the database and give the rest back at once,
// and the buyer must learn how many are left.
// Can fail: keeping every unit of the refused order deducted (the rule that
// was right for one unit an order) leaves Redis below the truth, tells user
// 3 sold_out and refuses user 4's 1 left as sold_out.
func TestAnOrderOverTheDatabaseGivesBackWhatTheDatabaseStillHas(t *testing.T) {
	sale := newQuantitySale(t, 6, 3)
	ctx := context.Background()
	if _, err := sale.buy(ctx, 1, 2); err != nil {
		t.Fatalf("user 1 buys 2 of 6: %v", err)
	}
	// The failover: Redis is back at its value before user 1's deduct.
	if err := sale.rdb.HIncrBy(ctx, sale.keys.Stock(sale.id), "remaining", 2).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := sale.buy(ctx, 2, 3); err != nil {
		t.Fatalf("user 2 buys 3 (Redis says 6 left, the database 4): %v", err)
	}
	_, err := sale.buy(ctx, 3, 3)
	var e *seckill.Error
	if !errors.As(err, &e) || e.Code != seckill.ENotEnoughStock || e.RemainingStock != 1 {
		t.Fatalf("user 3 asks for 3 (Redis says 3 left, the database 1): %v; want not_enough_stock with remaining_stock 1", err)
	}
	if _, err := sale.buy(ctx, 4, 1); err != nil {
		t.Fatalf("user 4 asks for the 1 unit the database still has: %v; want an order", err)
	}
	sale.checkUnits(t, 6, 3)
}
