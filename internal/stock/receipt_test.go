package stock_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/stock"
)

// After a failover that lost the fence counter's last INCRs, a new grant can
// get the fence an old holder had. Receipts keyed by fence alone were then
// shared: the new grant's deduct read the old one's receipt as its own
// ("already deducted: 2 units"), took nothing, and a caller indexing its 5
// buyers with a count of another deduct sliced out of range. Keyed by the
// grant's token, each deduct has its own receipt.
func TestTwoGrantsWithOneFenceKeepTheirOwnReceipts(t *testing.T) {
	s, _, _ := loadedStock(t, 10)
	ctx := context.Background()
	old, reused := stock.Grant{Fence: 5, Token: "old-holder"}, stock.Grant{Fence: 5, Token: "new-holder"}
	if taken, _, err := deduct(ctx, s, 1, old, 2); err != nil || taken != 2 {
		t.Fatalf("old grant's deduct: %d, %v; want 2", taken, err)
	}
	taken, left, err := deduct(ctx, s, 1, reused, 3)
	if err != nil || taken != 3 || left != 5 {
		t.Fatalf("new grant with the same fence: took %d, %d left, %v; want 3 and 5 left", taken, left, err)
	}
	// Each settles its own units back.
	if _, back, err := s.Settle(ctx, 1, old, 0); err != nil || back != 2 {
		t.Errorf("old grant's settle returned %d, %v; want its 2", back, err)
	}
	if _, back, err := s.Settle(ctx, 1, reused, 3); err != nil || back != 0 {
		t.Errorf("new grant's settle returned %d, %v; want 0 (it keeps its 3)", back, err)
	}
	if left, _ := s.Remaining(ctx, 1); left != 7 {
		t.Errorf("remaining %d, want 7", left)
	}
}

// A count from Redis larger than what the deduct asked for is never passed
// on: a caller indexes its buyers with it.
func TestDeductRefusesACountLargerThanAsked(t *testing.T) {
	s, rdb, ks := loadedStock(t, 10)
	ctx := context.Background()
	// A receipt holding more than this deduct will ask for.
	if err := rdb.Set(ctx, ks.Activity(1, "deduct:9:tok"), "1:8", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if taken, _, err := deduct(ctx, s, 1, stock.Grant{Fence: 9, Token: "tok"}, 3); err == nil || taken != 0 {
		t.Fatalf("deduct = %d, %v; want 0 and an error (the reply does not add up for 3 buyers)", taken, err)
	}
}
