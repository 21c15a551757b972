package purchase_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// docPrecedence is the refusals of docs/API.md "Precedence of refusals",
// in the order of its numbered steps: each `NNN code` at its first
// mention.
func docPrecedence(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Precedence of refusals\n")
	if !ok {
		t.Fatal(`docs/API.md has no "## Precedence of refusals"`)
	}
	steps, _, _ := strings.Cut(section, "\n\n`")
	var order []string
	for _, m := range regexp.MustCompile("`[0-9]{3} ([a-z_]+)`").FindAllStringSubmatch(steps, -1) {
		if !slices.Contains(order, m[1]) {
			order = append(order, m[1])
		}
	}
	return order
}

// The table and the doc list the purchase's refusals in one order: every
// check of the purchase that answers a refusal is a step of the doc, and
// the steps come in the table's order.
// Can fail: a line of seckill.Precedence moved, or added, without the doc.
func TestPrecedenceTableFollowsTheDoc(t *testing.T) {
	doc := docPrecedence(t)
	answers := map[string]bool{"idempotency_key": true} // the key's order: an answer, not a refusal
	last := -1
	for _, c := range seckill.Precedence {
		if c.Routes&seckill.RouteBuy == 0 || answers[c.Name] {
			continue
		}
		i := slices.Index(doc, c.Name)
		switch {
		case i < 0:
			t.Errorf("the purchase's check %q is not a step of docs/API.md's precedence %v", c.Name, doc)
		case i <= last:
			t.Errorf("the purchase's check %q comes after %q in the table, before it in docs/API.md's precedence %v", c.Name, doc[last], doc)
		default:
			last = i
		}
	}
}

// precedenceWorld is an instance with waiting rooms on the real Redis and
// MariaDB, on its own clock, whose user check rejects user 9.
func precedenceWorld(t *testing.T) (wiring.Service, func(total int64, room bool) seckill.ActivityView, func(activityID, userID int64), *clock) {
	t.Helper()
	rdb, prefix, orders, c := roomWorld(t)
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	users := verifierFunc(func(_ context.Context, userID, _ int64) error {
		if userID == 9 {
			return &usercheck.RejectedError{Reason: "blocked"}
		}
		return nil
	})
	svc, err := wiring.New(app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: c.Now}, Rooms: &waitingroom.Config{}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	sale := func(total int64, room bool) seckill.ActivityView {
		if room {
			return roomSale(t, svc, rdb, prefix, c.Now(), total)
		}
		a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "precedence", TotalStock: total, StartsAt: c.Now().Add(-time.Minute), EndsAt: c.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return svc, sale, func(activityID, userID int64) { admit(t, rdb, prefix, activityID, userID) }, c
}

// For each pair of the purchase's refusals, a state that triggers both:
// the one docs/API.md's precedence puts first answers. Each case sets up
// its own activity, then asks as the user it names.
// Can fail: two checks of seckill.Precedence swapped, or a check made out
// of its place (buy.go, rooms.go, paused.go).
func TestPrecedenceFirstRefusalWins(t *testing.T) {
	doc := docPrecedence(t)
	svc, sale, admit, c := precedenceWorld(t)
	ctx := context.Background()
	buy := func(t *testing.T, activityID, userID int64) string {
		t.Helper()
		_, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: activityID, UserID: userID})
		return code(err)
	}
	mustBuy := func(t *testing.T, activityID, userID int64) {
		t.Helper()
		if got := buy(t, activityID, userID); got != "" {
			t.Fatalf("set-up: user %d's purchase: %s, want an order", userID, got)
		}
	}
	// Each set-up leaves a state in which both refusals hold for the user
	// it returns; the clock goes back to now after each case.
	cases := []struct {
		first, second string
		setUp         func(t *testing.T) (activityID, userID int64)
	}{
		{seckill.ENotStarted, seckill.EAlreadyPurchased, func(t *testing.T) (int64, int64) {
			a := sale(5, false)
			mustBuy(t, a.ID, 1)
			c.Add(-2 * time.Minute)
			return a.ID, 1
		}},
		{seckill.EAlreadyPurchased, seckill.EEnded, func(t *testing.T) (int64, int64) {
			a := sale(5, false)
			mustBuy(t, a.ID, 1)
			c.Add(2 * time.Hour)
			return a.ID, 1
		}},
		{seckill.EAlreadyPurchased, seckill.EPaused, func(t *testing.T) (int64, int64) {
			a := sale(5, false)
			mustBuy(t, a.ID, 1)
			svc.SaleStopped(a.ID, true)
			return a.ID, 1
		}},
		{seckill.EEnded, seckill.EPaused, func(t *testing.T) (int64, int64) {
			a := sale(5, false)
			svc.SaleStopped(a.ID, true)
			c.Add(2 * time.Hour)
			return a.ID, 2
		}},
		{seckill.EPaused, seckill.ENotAdmitted, func(t *testing.T) (int64, int64) {
			a := sale(5, true)
			svc.SaleStopped(a.ID, true) // this instance's mark; Redis's flag is not set
			return a.ID, 2
		}},
		{seckill.EAlreadyPurchased, seckill.ENotAdmitted, func(t *testing.T) (int64, int64) {
			a := sale(5, true)
			admit(a.ID, 1)
			mustBuy(t, a.ID, 1) // the admission is used up
			return a.ID, 1
		}},
		{seckill.ENotAdmitted, seckill.EUserRejected, func(t *testing.T) (int64, int64) {
			a := sale(5, true)
			admit(a.ID, 9)
			if got := buy(t, a.ID, 9); got != seckill.EUserRejected { // remembered; the admission used up
				t.Fatalf("set-up: user 9, admitted: %s, want user_rejected", got)
			}
			return a.ID, 9
		}},
		{seckill.EUserRejected, seckill.ESoldOut, func(t *testing.T) (int64, int64) {
			a := sale(1, false)
			if got := buy(t, a.ID, 9); got != seckill.EUserRejected {
				t.Fatalf("set-up: user 9: %s, want user_rejected", got)
			}
			mustBuy(t, a.ID, 1)
			if got := buy(t, a.ID, 2); got != seckill.ESoldOut { // and marked so
				t.Fatalf("set-up: user 2 after the last unit: %s, want sold_out", got)
			}
			return a.ID, 9
		}},
		{seckill.EAlreadyPurchased, seckill.ESoldOut, func(t *testing.T) (int64, int64) {
			a := sale(1, false)
			mustBuy(t, a.ID, 1)
			if got := buy(t, a.ID, 2); got != seckill.ESoldOut {
				t.Fatalf("set-up: user 2 after the last unit: %s, want sold_out", got)
			}
			return a.ID, 1
		}},
	}
	for _, tc := range cases {
		t.Run(tc.first+"/"+tc.second, func(t *testing.T) {
			now := c.Now()
			t.Cleanup(func() { c.Add(now.Sub(c.Now())) })
			want := tc.first
			if slices.Index(doc, tc.second) < slices.Index(doc, tc.first) {
				want = tc.second // the doc's order decides, not the case's
			}
			activityID, userID := tc.setUp(t)
			if got := buy(t, activityID, userID); got != want {
				t.Errorf("both %s and %s hold: answered %q, want %q (docs/API.md's precedence %v)", tc.first, tc.second, got, want, doc)
			}
		})
	}
}
