package chaos

import (
	"slices"
	"testing"

	"github.com/seckill-oss/seckill"
)

// The books part of the checker is seckill.Books' check: each of its
// violations at the last look is reported under its invariant; balanced
// books add none, and a look balances only when Redis adds up.
func TestCheckBooks(t *testing.T) {
	ok := seckill.Books{ActivityID: 1, TotalStock: 5, Sold: 2, Held: 2, Rows: 3, RedisRemaining: 3, RedisLoaded: true}
	off := seckill.Books{ActivityID: 2, TotalStock: 5, Sold: 5, Held: 6, Rows: 6, RedisRemaining: 1, RedisLoaded: true}
	if !balanced(ok) || balanced(off) || balanced(seckill.Books{ActivityID: 3, TotalStock: 1}) {
		t.Error("balanced: want only the books whose Redis adds up")
	}
	st := finalState{activities: []activityState{{Books: ok}, {Books: off, Balanced: -1}}}
	var got []string
	for _, v := range check(NewHistory(), nil, st) {
		got = append(got, v.Invariant)
	}
	if want := []string{InvNoOversell, InvBooksBalance, InvExpiryOneUnit}; !slices.Equal(got, want) {
		t.Errorf("invariants broken: %v, want %v", got, want)
	}
}

// The units' count fails on orders holding more units than the total, and
// counts an order of k as k.
func TestCheckUnits(t *testing.T) {
	st := finalState{
		activities: []activityState{{Books: seckill.Books{ActivityID: 1, TotalStock: 5}}},
		orders: []orderRow{
			{ID: "a", Activity: 1, Status: "paid", Units: 3},
			{ID: "b", Activity: 1, Status: "created", Units: 2},
			{ID: "c", Activity: 1, Status: "expired", Units: 3},
		},
	}
	if got := checkUnits(st); len(got) != 0 {
		t.Errorf("5 units held of 5: %d violations, want 0", len(got))
	}
	st.orders[2].Status = "created"
	if got := checkUnits(st); len(got) != 1 || got[0].inv != InvNoOversell {
		t.Errorf("8 units held of 5: %v, want one %q", got, InvNoOversell)
	}
}
