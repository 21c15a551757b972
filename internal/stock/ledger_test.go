package stock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill-oss/seckill/internal/stock"
)

// TestLedgerHoldsThroughEveryScript: after each step the purchase path and
// an expiry can take (a deduct, its resend, a partial settle, a tombstone and
// the deduct landing after it, an order's return and its repeat, a reload),
// the units out of the stock are exactly those the receipts hold. The resent
// deduct is the step that breaks it when deduct.lua's receipt check is taken
// away: the second take is recorded over the first.
func TestLedgerHoldsThroughEveryScript(t *testing.T) {
	s, rdb, ks := emptyStock(t)
	ctx := context.Background()
	if _, err := s.Ledger(ctx, 1); !errors.Is(err, stock.ErrNotLoaded) {
		t.Fatalf("Ledger before a load: %v, want ErrNotLoaded", err)
	}
	if err := s.Load(ctx, 1, 10, 3); err != nil {
		t.Fatal(err)
	}
	g := func(fence int64) stock.Grant { return stock.Grant{Fence: fence, Token: "t"} }
	steps := []struct {
		name string
		do   func() error
	}{
		{"grant 10 takes 3", func() error { _, _, err := deduct(ctx, s, 1, g(10), 3, 1, 2, 3); return err }},
		{"grant 10's deduct resent", func() error { _, _, err := deduct(ctx, s, 1, g(10), 3, 1, 2, 3); return err }},
		{"grant 10 keeps 1", func() error { _, _, err := s.Settle(ctx, 1, g(10), 1); return err }},
		{"grant 11 settled before its deduct landed", func() error {
			if _, _, err := s.Settle(ctx, 1, g(11), 0); !errors.Is(err, stock.ErrNoDeduct) {
				return err
			}
			return nil
		}},
		{"grant 11's deduct lands late", func() error {
			if _, _, err := deduct(ctx, s, 1, g(11), 2, 4, 5); !errors.Is(err, stock.ErrReturned) {
				return err
			}
			return nil
		}},
		{"grant 12 takes 2", func() error { _, _, err := deduct(ctx, s, 1, g(12), 2, 6, 7); return err }},
		{"an order of grant 12 expires", func() error { _, err := s.ReturnOrder(ctx, 1, "o-1", 1, 3); return err }},
		{"its return repeated", func() error {
			if _, err := s.ReturnOrder(ctx, 1, "o-1", 1, 3); !errors.Is(err, stock.ErrOrderReturned) {
				return err
			}
			return nil
		}},
		{"a reload in epoch 20", func() error { return s.Load(ctx, 1, 6, 20) }},
		{"grant 12 settles after the reload", func() error {
			if _, _, err := s.Settle(ctx, 1, g(12), 0); !errors.Is(err, stock.ErrStale) {
				return err
			}
			return nil
		}},
		{"grant 21 takes 4", func() error { _, _, err := deduct(ctx, s, 1, g(21), 4, 8, 9, 10, 11); return err }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		l, err := s.Ledger(ctx, 1)
		if err != nil {
			t.Fatalf("%s: Ledger: %v", st.name, err)
		}
		if off := l.Off(); off != 0 {
			t.Errorf("after %s: the ledger is off by %d (%+v)", st.name, off, l)
		}
	}
	l, err := s.Ledger(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Loaded != 6 || l.Remaining != 2 || l.Epoch != 20 || len(l.Deducts) != 4 || len(l.Returns) != 1 {
		t.Errorf("ledger = %+v; want loaded 6, remaining 2, epoch 20, 4 deduct receipts, 1 return", l)
	}

	// A stock loaded before loads kept their ledger cannot be checked.
	if err := rdb.HSet(ctx, ks.Stock(2), "remaining", 5, "epoch", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ledger(ctx, 2); !errors.Is(err, stock.ErrNoLedger) {
		t.Errorf("Ledger of a stock without its load: %v, want ErrNoLedger", err)
	}
}
