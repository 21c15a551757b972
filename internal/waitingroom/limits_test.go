package waitingroom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// A room holds at most maxPlaces places not yet admitted: a join past it
// gets no place, and a place freed by an admission can be taken again.
// Can fail: without join.lua's bound every join gets a place.
func TestFullRoomGivesNoPlace(t *testing.T) {
	st, _, _ := openRoom(t, 0, 10)
	ctx := context.Background()
	for u := int64(1); u <= 3; u++ {
		if got, _, err := st.join(ctx, 1, u, 3, true); err != nil || got != joined {
			t.Fatalf("join %d of 3: %q, %v", u, got, err)
		}
	}
	if got, _, err := st.join(ctx, 1, 4, 3, true); err != nil || got != isFull {
		t.Fatalf("a fourth join in a room of 3 places: %q, %v; want %q", got, err, isFull)
	}
	if got, _, _ := st.join(ctx, 1, 2, 3, true); got != have {
		t.Errorf("a member joining again in a full room: %q, want %q", got, have)
	}
	if res, err := st.admit(ctx, 1, Pace{MinRate: 1, MaxRate: 1, TTL: time.Minute}); err != nil || res.admitted != 1 {
		t.Fatalf("admit one: %+v, %v", res, err)
	}
	if got, _, err := st.join(ctx, 1, 4, 3, true); err != nil || got != joined {
		t.Errorf("a join after an admission freed a place: %q, %v", got, err)
	}
}

// Every key of a room expires 24 hours after the sale ends, whichever
// script wrote it last.
// Can fail: without keep() in the scripts, the line, the admissions and
// the ends never expire.
func TestRoomKeysExpireADayAfterTheEnd(t *testing.T) {
	st, _, rdb := openRoom(t, 0, 1)
	ctx := context.Background()
	mustJoin(t, st, 1, 2)
	if _, err := st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := st.finish(ctx, 1, map[int64]string{1: "c:user_rejected"}); err != nil {
		t.Fatal(err)
	}
	ends, err := rdb.HGet(ctx, st.room(1), "ends").Int64()
	if err != nil {
		t.Fatal(err)
	}
	want := time.UnixMilli(ends).Add(Retention)
	for _, k := range append(st.userKeys(1), st.space.WaitingNotes(1)) {
		at, err := rdb.PExpireTime(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if at == -2 && k == st.space.WaitingAdmitted(1) {
			continue // the one admission was used up: the set is gone
		}
		if got := time.UnixMilli(at.Milliseconds()); !got.Equal(want) {
			t.Errorf("%s expires at %v (%v), want %v: 24 h after the end", k, got, at, want)
		}
	}
	if ttl, err := rdb.PTTL(ctx, st.space.WaitingRooms()).Result(); err != nil || ttl != -1 {
		// The list of rooms is shared by every activity; Open prunes it.
		t.Logf("rooms list TTL %v, %v", ttl, err)
	}
}

// A room Redis lost is told apart from a room turned off: the purchase
// path then fails closed (seckill.ErrRoomLost).
func TestLostRoomIsToldApartFromOff(t *testing.T) {
	st, _, rdb := openRoom(t, 0, 1)
	ctx := context.Background()
	if _, on, err := st.admittedUntil(ctx, 1, 1); err != nil || !on {
		t.Fatalf("open room: on %v, %v", on, err)
	}
	if err := st.Shut(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, on, err := st.admittedUntil(ctx, 1, 1); err != nil || on {
		t.Fatalf("room turned off: on %v, %v; want off and no error", on, err)
	}
	if err := rdb.Del(ctx, st.room(1)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.admittedUntil(ctx, 1, 1); !errors.Is(err, seckill.ErrRoomLost) {
		t.Fatalf("room lost: %v, want ErrRoomLost", err)
	}
	s, err := st.standing(ctx, 1, 1)
	if err != nil || !s.lost {
		t.Fatalf("standing of a lost room: %+v, %v; want lost", s, err)
	}
	if err := failClosed(seckill.Activity{ID: 1, WaitingRoom: &seckill.WaitingRoom{}}, s); !errors.Is(err, seckill.ErrRoomLost) {
		t.Errorf("join or poll of a lost room: %v, want 503 with ErrRoomLost", err)
	}
}

// With the idle lapse on, an admitted buyer who is not seen for the idle
// time loses the admission at the next step and the unit goes to the next
// in line; one who polls keeps it.
// Can fail: without the idle loop in admit.lua, both keep their admission
// until its TTL (a minute here).
func TestIdleAdmissionLapsesEarly(t *testing.T) {
	st, _, _ := openRoom(t, 0, 2)
	ctx := context.Background()
	mustJoin(t, st, 1, 2, 3)
	p := Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute, Idle: 400 * time.Millisecond}
	if res, err := st.admit(ctx, 1, p); err != nil || res.admitted != 2 {
		t.Fatalf("admit two of three: %+v, %v", res, err)
	}
	for range 4 {
		time.Sleep(150 * time.Millisecond)
		if err := st.seen(ctx, 1, 2, 0); err != nil { // user 2 polls; user 1 is gone
			t.Fatal(err)
		}
	}
	res, err := st.admit(ctx, 1, p)
	if err != nil || res.lapsed != 1 || res.admitted != 1 {
		t.Fatalf("after 600 ms: %+v, %v; want user 1 lapsed and user 3 admitted", res, err)
	}
	wantAdmitted(t, st, map[int64]bool{1: false, 2: true, 3: true})
	if s, _ := st.standing(ctx, 1, 1); s.end != "l" {
		t.Errorf("user 1's end %q, want lapsed", s.end)
	}
	if err := st.seen(ctx, 1, 1, 0); err != nil {
		t.Fatal(err)
	}
	if res, _ := st.admit(ctx, 1, p); res.admitted != 0 {
		t.Errorf("a lapsed user seen again is not admitted again: %+v", res)
	}
}

// A buyer whose purchase is in flight (the queue, the lock, the user check)
// counts as seen until it could have reached its deduct: the idle lapse
// must not take the admission from under the purchase, which the deduct
// would then refuse as not admitted. A poll meanwhile does not shorten it.
// Can fail: with seen.lua's ARGV[2] ignored, user 1 lapses with user 2;
// without its GT, user 1's poll moves the time back and it lapses too.
func TestABuyingBuyerIsNotLapsedAsIdle(t *testing.T) {
	st, _, _ := openRoom(t, 0, 2)
	ctx := context.Background()
	mustJoin(t, st, 1, 2)
	p := Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute, Idle: 300 * time.Millisecond}
	if res, err := st.admit(ctx, 1, p); err != nil || res.admitted != 2 {
		t.Fatalf("admit both: %+v, %v", res, err)
	}
	if err := st.seen(ctx, 1, 1, 5*time.Second); err != nil { // user 1 buys, for up to 5 s
		t.Fatal(err)
	}
	if err := st.seen(ctx, 1, 2, 0); err != nil { // user 2 polls once, then leaves
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := st.seen(ctx, 1, 1, 0); err != nil { // user 1 polls while buying
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	res, err := st.admit(ctx, 1, p)
	if err != nil || res.lapsed != 1 {
		t.Fatalf("after 600 ms: %+v, %v; want user 2 lapsed, user 1 (buying) not", res, err)
	}
	wantAdmitted(t, st, map[int64]bool{1: true, 2: false})
}

// A buyer told to come back later than the idle time (the draw's spread, a
// far place's refresh_s) and admitted meanwhile keeps the admission until
// they were due back, plus the idle time; one never told keeps it for the
// idle time only. Seen in room.sh --no-show 0.5: 263 buyers
// who polled as told lost their admission before their first poll.
// Can fail: with the idle clock started at the admission (admit.lua without
// KEYS[7]), user 1 lapses with user 2.
func TestIdleLapseWaitsForTheBuyersDueTime(t *testing.T) {
	st, _, _ := openRoom(t, 0, 2)
	ctx := context.Background()
	mustJoin(t, st, 1, 2)
	if err := st.due(ctx, 1, 1, 2*time.Second); err != nil { // user 1 was told refresh_s 2
		t.Fatal(err)
	}
	p := Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute, Idle: 300 * time.Millisecond}
	if res, err := st.admit(ctx, 1, p); err != nil || res.admitted != 2 {
		t.Fatalf("admit both: %+v, %v", res, err)
	}
	time.Sleep(600 * time.Millisecond)
	res, err := st.admit(ctx, 1, p)
	if err != nil || res.lapsed != 1 {
		t.Fatalf("after 600 ms: %+v, %v; want user 2 lapsed (never told to wait), user 1 not (due in 2 s)", res, err)
	}
	wantAdmitted(t, st, map[int64]bool{1: true, 2: false})
	if n, err := st.rdb.ZCard(ctx, st.space.WaitingDue(1)).Result(); err != nil || n != 0 {
		t.Errorf("due times left after the admission: %d, %v", n, err)
	}
}

// wantAdmitted holds each user's admission in activity 1 to want (true:
// open now).
func wantAdmitted(t *testing.T, st *Store, want map[int64]bool) {
	t.Helper()
	for u, w := range want {
		until, _, err := st.admittedUntil(context.Background(), 1, u)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Now().Before(until); got != w {
			t.Errorf("user %d admitted %v, want %v", u, got, w)
		}
	}
}
