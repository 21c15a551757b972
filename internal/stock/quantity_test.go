package stock_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// Quantity per buyer on real Redis: each buyer of a grant gets all the units
// asked for or none, in turn, a resend answers the same buyers, a settle
// reads the receipt that lists them, and the ledger balances in units.
// Can fail: a deduct that hands out what is left (part of an ask) serves
// buyer 1 with 1 of 2; a resend that assumes the first buyers were served
// names buyer 1 instead of 2.
func TestDeductEachServesWholeAsks(t *testing.T) {
	s := stock.New(testenv.Redis(t), keys.NewSpace(testenv.Prefix(t)))
	ctx := context.Background()
	if err := s.Load(ctx, 1, 6, 3); err != nil {
		t.Fatal(err)
	}
	g := stock.Grant{Fence: 10, Token: "a"}
	buyers, units := []int64{101, 102, 103, 104}, []int64{3, 4, 2, 1}
	for _, round := range []string{"deduct", "resent"} {
		served, taken, left, err := s.DeductEach(ctx, 1, g, buyers, units)
		if err != nil || taken != 6 || left != 0 || !slices.Equal(served, []int{0, 2, 3}) {
			t.Fatalf("%s: served %v, took %d, %d left, %v; want buyers 0, 2, 3 served with 6, 0 left", round, served, taken, left, err)
		}
	}
	holders, err := s.Holders(ctx, 1, buyers)
	if err != nil || !holders[101] || holders[102] || !holders[103] || !holders[104] {
		t.Errorf("buyer set %v, %v: want 101, 103, 104", holders, err)
	}
	// The grant keeps 3 (buyer 101's order); 3 go back.
	if left, back, err := s.Settle(ctx, 1, g, 3); err != nil || left != 3 || back != 3 {
		t.Errorf("settle keeping 3: %d left, %d back, %v; want 3, 3", left, back, err)
	}
	// A buyer who asks for more than is left is not served; a smaller ask
	// is; nothing served is ErrSoldOut with what is left.
	g2 := stock.Grant{Fence: 11, Token: "b"}
	served, taken, left, err := s.DeductEach(ctx, 1, g2, []int64{201, 202}, []int64{4, 1})
	if err != nil || taken != 1 || left != 2 || !slices.Equal(served, []int{1}) {
		t.Errorf("4 and 1 of 3: served %v, took %d, %d left, %v; want only the 1", served, taken, left, err)
	}
	_, _, left, err = s.DeductEach(ctx, 1, stock.Grant{Fence: 12, Token: "c"}, []int64{301}, []int64{3})
	if !errors.Is(err, stock.ErrSoldOut) || left != 2 {
		t.Errorf("3 of 2: %d left, %v; want ErrSoldOut with 2 left", left, err)
	}
	if _, _, _, err := s.DeductEach(ctx, 1, stock.Grant{Fence: 13, Token: "d"}, []int64{401}, []int64{0}); err == nil {
		t.Error("an ask of 0 units accepted")
	}
	// An expired order of 2 gives both back, once.
	epoch, err := s.Epoch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.ReturnOrder(ctx, 1, "o-2", 2, epoch); err != nil && !errors.Is(err, stock.ErrOrderReturned) {
			t.Fatal(err)
		}
	}
	l, err := s.Ledger(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Remaining != 4 || l.Returned() != 2 || l.Off() != 0 {
		t.Errorf("ledger: %d left, %d returned, off by %d; want 4, 2, 0", l.Remaining, l.Returned(), l.Off())
	}
}
