package waitingroom

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// openRoom opens a room for activity 1 on real Redis whose window is
// [opens, starts, ends), with units in stock.
func openRoom(t *testing.T, startsIn time.Duration, units int64) (*Store, *stock.Store, redis.UniversalClient) {
	t.Helper()
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	st, sk := NewStore(rdb, keys.NewSpace(prefix), 0, 0), stock.New(rdb, keys.NewSpace(prefix))
	now := time.Now()
	ctx := context.Background()
	if err := sk.Load(ctx, 1, units, 1); err != nil {
		t.Fatal(err)
	}
	err := st.Open(ctx, 1, Window{OpensAt: now.Add(-time.Minute), StartsAt: now.Add(startsIn), EndsAt: now.Add(time.Hour), Seed: "00112233445566778899aabbccddeeff"})
	if err != nil {
		t.Fatal(err)
	}
	return st, sk, rdb
}

func mustJoin(t *testing.T, st *Store, users ...int64) {
	t.Helper()
	for _, u := range users {
		if got, _, err := st.join(context.Background(), 1, u, DefaultMaxPlaces, true); err != nil || got != joined {
			t.Fatalf("join %d: %q, %v", u, got, err)
		}
	}
}

// The draw: a pre-queue place is fixed by the seed and the user alone,
// as docs/API.md tells an operator to recompute it, and every later joiner
// is behind every pre-queue place, in arrival order.
// Can fail: with places given in arrival order, the line equals the join
// order and not the seed's order.
func TestDrawFollowsTheSeedAndLateJoinersQueueBehind(t *testing.T) {
	st, _, rdb := openRoom(t, 300*time.Millisecond, 10)
	ctx := context.Background()
	pre := []int64{11, 12, 13, 14, 15, 16, 17, 18}
	mustJoin(t, st, pre...)
	// Joining again gives the same place.
	if got, _, _ := st.join(ctx, 1, 11, DefaultMaxPlaces, true); got != have {
		t.Errorf("joining again: %q, want %q", got, have)
	}
	time.Sleep(400 * time.Millisecond)
	late := []int64{3, 2, 1}
	mustJoin(t, st, late...)

	line, err := rdb.ZRange(ctx, st.space.WaitingLine(1), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(pre)
	place := func(u int64) string {
		sum := sha1.Sum([]byte("00112233445566778899aabbccddeeff:" + strconv.FormatInt(u, 10)))
		return hex.EncodeToString(sum[:])[:13]
	}
	slices.SortFunc(want, func(a, b int64) int {
		pa, _ := strconv.ParseUint(place(a), 16, 64)
		pb, _ := strconv.ParseUint(place(b), 16, 64)
		return cmp.Compare(pa, pb)
	})
	want = append(want, late...)
	got := make([]int64, len(line))
	for i, m := range line {
		got[i], _ = strconv.ParseInt(m, 10, 64)
	}
	if !slices.Equal(got, want) {
		t.Errorf("line %v, want %v (the seed's order, then the late joiners in arrival order)", got, want)
	}
	if slices.Equal(got[:len(pre)], pre) {
		t.Error("the pre-queue kept its join order")
	}
}

// Admissions never exceed the units no open admission holds, and the deduct
// takes units only for open admissions.
// Can fail: with admit.lua admitting up to the units left (ignoring the
// open admissions), the second step admits again.
func TestAdmissionsHoldTheirUnits(t *testing.T) {
	st, sk, _ := openRoom(t, 0, 3)
	ctx := context.Background()
	mustJoin(t, st, 1, 2, 3, 4, 5, 6)
	pace := Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}
	res, err := st.admit(ctx, 1, pace)
	if err != nil || res.admitted != 3 || res.open != 3 || res.waiting != 3 {
		t.Fatalf("first step: %+v, %v; want 3 admitted, 3 waiting", res, err)
	}
	if res, err = st.admit(ctx, 1, pace); err != nil || res.admitted != 0 {
		t.Fatalf("second step: %+v, %v; want nobody more: every unit is held", res, err)
	}
	// User 4 is not admitted: the deduct refuses it and takes nothing.
	_, _, _, err = sk.DeductEach(ctx, 1, stock.Grant{Fence: 1, Token: "a"}, []int64{1, 4}, []int64{1, 1})
	var refused *stock.NotAdmittedError
	if !errors.As(err, &refused) || !slices.Equal(refused.Buyers, []int{1}) {
		t.Fatalf("deduct for 1 and 4: %v; want 4 (index 1) refused", err)
	}
	if left, _ := sk.Remaining(ctx, 1); left != 3 {
		t.Fatalf("a refused deduct took units: %d left", left)
	}
	if _, taken, _, err := sk.DeductEach(ctx, 1, stock.Grant{Fence: 2, Token: "b"}, []int64{1}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("deduct for admitted 1: %d, %v", taken, err)
	}
	// 1 bought; a rejected buyer (2) gives their unit to the next in line.
	if err := st.finish(ctx, 1, map[int64]string{1: "d:o1", 2: "c:user_rejected"}); err != nil {
		t.Fatal(err)
	}
	if res, err = st.admit(ctx, 1, pace); err != nil || res.admitted != 1 || res.open != 2 {
		t.Fatalf("after a purchase and a rejection: %+v, %v; want 1 admitted (2 units, 1 still held)", res, err)
	}
	s4, err := st.standing(ctx, 1, 4)
	if err != nil || s4.until <= s4.now.UnixMilli() {
		t.Errorf("user 4 after the rejection: %+v, %v; want admitted", s4, err)
	}
}

// An admission that lapses goes to the next place in line, and its user
// may join again, at the back.
func TestLapsedAdmissionGoesToTheNext(t *testing.T) {
	st, _, _ := openRoom(t, 0, 1)
	ctx := context.Background()
	mustJoin(t, st, 1, 2)
	if res, err := st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: 200 * time.Millisecond}); err != nil || res.admitted != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	time.Sleep(300 * time.Millisecond)
	res, err := st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute})
	if err != nil || res.lapsed != 1 || res.admitted != 1 {
		t.Fatalf("%+v, %v; want one lapsed, the next admitted", res, err)
	}
	first, _ := st.standing(ctx, 1, 1)
	if first.end != "l" {
		t.Errorf("first user's end %q, want lapsed", first.end)
	}
	if got, _, _ := st.join(ctx, 1, 1, DefaultMaxPlaces, true); got != joined {
		t.Errorf("a lapsed user joining again: %q, want a new place", got)
	}
}

// With no unit left and no admission open the room closes; a unit given
// back opens it again.
func TestClosesWhenSoldOutAndReopens(t *testing.T) {
	st, sk, rdb := openRoom(t, 0, 1)
	ctx := context.Background()
	mustJoin(t, st, 1, 2)
	if _, err := st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if closed, _ := st.closeSoldOut(ctx, 1); closed {
		t.Fatal("closed with an admission open")
	}
	if _, _, _, err := sk.DeductEach(ctx, 1, stock.Grant{Fence: 1, Token: "a"}, []int64{1}, []int64{1}); err != nil {
		t.Fatal(err)
	}
	if err := st.finish(ctx, 1, map[int64]string{1: "d:o1"}); err != nil {
		t.Fatal(err)
	}
	if closed, err := st.closeSoldOut(ctx, 1); err != nil || !closed {
		t.Fatalf("sold out, nothing open: closed %v, %v", closed, err)
	}
	if got, _, _ := st.join(ctx, 1, 3, DefaultMaxPlaces, true); got != isClosed {
		t.Errorf("joining a closed room: %q", got)
	}
	s2, _ := st.standing(ctx, 1, 2)
	if s2.closed != "sold_out" {
		t.Errorf("waiting user sees %q, want sold_out", s2.closed)
	}
	if err := rdb.HIncrBy(ctx, st.space.Stock(1), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute})
	if err != nil || res.closed != "" || res.admitted != 1 {
		t.Errorf("after a unit came back: %+v, %v; want open again and user 2 admitted", res, err)
	}
}

// With a per-user limit, an admission holds that many units: 7 units and a
// limit of 3 admit two buyers, and the last unit waits for them; a purchase
// of 1 gives the other 2 to the next in line at once; the last units, fewer
// than a hold, go to one buyer when nobody else holds any.
// Can fail: counting admissions against units (one each) admits 7 buyers,
// and the fourth to ask for 3 hears not_enough_stock while admitted.
func TestAnAdmissionHoldsThePerUserLimit(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	st, sk := NewStore(rdb, keys.NewSpace(prefix), 0, 0), stock.New(rdb, keys.NewSpace(prefix))
	ctx := context.Background()
	now := time.Now()
	if err := sk.Load(ctx, 1, 7, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Open(ctx, 1, Window{OpensAt: now.Add(-time.Minute), StartsAt: now, EndsAt: now.Add(time.Hour), Seed: "00112233445566778899aabbccddeeff", Hold: 3}); err != nil {
		t.Fatal(err)
	}
	mustJoin(t, st, 1, 2, 3, 4, 5)
	pace := Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}
	if res, err := st.admit(ctx, 1, pace); err != nil || res.admitted != 2 || res.open != 2 {
		t.Fatalf("7 units, holds of 3: %+v, %v; want 2 admitted", res, err)
	}
	if res, err := st.admit(ctx, 1, pace); err != nil || res.admitted != 0 {
		t.Fatalf("again: %+v, %v; want nobody more: 6 units held, 1 free", res, err)
	}
	// An admitted buyer buys 1 of their 3; 2 + the free 1 make a hold.
	if _, taken, _, err := sk.DeductEach(ctx, 1, stock.Grant{Fence: 2, Token: "a"}, []int64{1}, []int64{1}); err != nil || taken != 1 {
		t.Fatalf("admitted user 1 buys 1: %d, %v", taken, err)
	}
	if err := st.finish(ctx, 1, map[int64]string{1: "d:o1"}); err != nil {
		t.Fatal(err)
	}
	if res, err := st.admit(ctx, 1, pace); err != nil || res.admitted != 1 || res.open != 2 {
		t.Fatalf("after a purchase of 1 of 3: %+v, %v; want 1 admitted (3 free)", res, err)
	}
	// Users 2 and 3 buy 3 each: none left for user 4.
	for _, u := range []int64{2, 3} {
		if served, taken, _, err := sk.DeductEach(ctx, 1, stock.Grant{Fence: 2 + u, Token: "b"}, []int64{u}, []int64{3}); err != nil || taken != 3 || len(served) != 1 {
			t.Fatalf("admitted user %d buys 3: %v, %d, %v", u, served, taken, err)
		}
	}
	if err := st.finish(ctx, 1, map[int64]string{2: "d:o2", 3: "d:o3"}); err != nil {
		t.Fatal(err)
	}
	if left, _ := sk.Remaining(ctx, 1); left != 0 {
		t.Fatalf("%d left, want 0", left)
	}
	// Ops add 2 units: fewer than a hold, nobody holds any: the next in line
	// gets them.
	if err := sk.Load(ctx, 1, 2, 9); err != nil {
		t.Fatal(err)
	}
	if res, err := st.admit(ctx, 1, pace); err != nil || res.admitted != 1 {
		t.Fatalf("2 units left, fewer than a hold, none open: %+v, %v; want 1 admitted", res, err)
	}
}
