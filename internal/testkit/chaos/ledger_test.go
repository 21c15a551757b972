package chaos

import (
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/stock"
)

// TestLedgerWatch: a receipt that expires keeps counting, one lost with a
// failover's writes stops counting, and an epoch whose units are not all in
// receipts is reported once.
func TestLedgerWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	rc := func(epoch, units int64, ttl time.Duration) stock.Receipt {
		return stock.Receipt{Epoch: epoch, Units: units, TTL: ttl}
	}
	read := func(remaining int64, deducts map[string]stock.Receipt) stock.Ledger {
		return stock.Ledger{Remaining: remaining, Epoch: 5, Loaded: 10, Deducts: deducts, Returns: map[string]stock.Receipt{"r1": {Epoch: 5, Units: 1}, "r0": {Epoch: 4, Units: 1}}}
	}
	lw := newLedgerWatch(nil, []int64{1})
	// 10 loaded, 3 held by a, 2 by b, one order returned: 6 left.
	lw.account(1, read(6, map[string]stock.Receipt{"a": rc(5, 3, 2*time.Second), "b": rc(5, 2, time.Minute), "old": rc(4, 7, time.Minute)}), t0)
	// a expired; b is still there.
	lw.account(1, read(6, map[string]stock.Receipt{"b": rc(5, 2, time.Minute-3*time.Second)}), t0.Add(3*time.Second))
	if got := lw.breaks(); len(got) != 0 {
		t.Fatalf("an expired receipt stopped counting: %+v", got)
	}
	// A failover lost c (taken after the last read) with its units, and b
	// was lost before its time: c and its units are both gone, b's units
	// came back with the lost deduct; the ledger holds: 10 - 8 - 3 + 1 = 0.
	lw.account(1, read(8, map[string]stock.Receipt{}), t0.Add(4*time.Second))
	if got := lw.breaks(); len(got) != 0 {
		t.Fatalf("a receipt lost with its units broke the ledger: %+v", got)
	}
	// A deduct took 2 units and its receipt says 1 (a resend recorded
	// over the first take): off by 1, reported once however often read.
	lw.account(1, read(6, map[string]stock.Receipt{"d": rc(5, 1, time.Minute)}), t0.Add(5*time.Second))
	lw.account(1, read(6, map[string]stock.Receipt{"d": rc(5, 1, time.Minute)}), t0.Add(6*time.Second))
	got := lw.breaks()
	if len(got) != 1 || got[0].off != 1 || got[0].epoch != 5 || !got[0].at.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("breaks = %+v; want one, off by 1 in epoch 5, at the first read", got)
	}
}
