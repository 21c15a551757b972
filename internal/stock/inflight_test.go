package stock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/stock"
)

// One admission, one deduct at a time: the same admitted buyer buying on
// two instances at once (two grants, before the first batch's answer used
// the admission up) must not deduct twice. The room counts one hold an
// open admission, so a second deduct would take the units another admitted
// buyer was promised, and that buyer would be told sold_out. Once the first
// deduct's units went back (its settle at 0), the buyer may deduct again.
// Can fail: with deduct.lua checking only the admission, user 1's second
// grant takes the last unit and user 2, admitted, finds none.
func TestOneAdmissionDeductsOnceAtATime(t *testing.T) {
	s, rdb, ks := loadedStock(t, 2)
	ctx := context.Background()
	until := float64(time.Now().Add(time.Minute).UnixMilli())
	if err := rdb.HSet(ctx, ks.WaitingRoom(1), "on", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, ks.WaitingAdmitted(1), redis.Z{Score: until, Member: "1"}, redis.Z{Score: until, Member: "2"}).Err(); err != nil {
		t.Fatal(err)
	}
	a, b := stock.Grant{Fence: 1, Token: "instance-a"}, stock.Grant{Fence: 2, Token: "instance-b"}
	if _, taken, _, err := s.DeductEach(ctx, 1, a, []int64{1}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("user 1 on A: %d, %v", taken, err)
	}
	_, taken, _, err := s.DeductEach(ctx, 1, b, []int64{1}, []int64{1})
	var inFlight *stock.InFlightError
	if !errors.As(err, &inFlight) || len(inFlight.Buyers) != 1 || taken != 0 {
		t.Fatalf("user 1 on B while A's deduct holds their units: %d, %v; want the buyer refused as in flight", taken, err)
	}
	if _, taken, _, err := s.DeductEach(ctx, 1, stock.Grant{Fence: 3, Token: "c"}, []int64{2}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("user 2, admitted, after user 1's second try: %d, %v; want the unit user 2 was promised", taken, err)
	}
	if _, _, err := s.Settle(ctx, 1, a, 0); err != nil {
		t.Fatal(err)
	}
	if _, taken, _, err := s.DeductEach(ctx, 1, stock.Grant{Fence: 4, Token: "d"}, []int64{1}, []int64{1}); err != nil || taken != 1 {
		t.Errorf("user 1 again once A's units went back: %d, %v; want the unit", taken, err)
	}
}
