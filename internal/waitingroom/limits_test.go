package waitingroom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

// A room holds at most maxPlaces places not yet admitted: a join past it
// gets no place, and a place freed by an admission can be taken again.
// Can fail: without join.lua's bound every join gets a place.
func TestFullRoomGivesNoPlace(t *testing.T) {
	st, _, _ := openRoom(t, 0, 10)
	ctx := context.Background()
	for u := int64(1); u <= 3; u++ {
		if got, err := st.join(ctx, 1, u, 3); err != nil || got != joined {
			t.Fatalf("join %d of 3: %q, %v", u, got, err)
		}
	}
	if got, err := st.join(ctx, 1, 4, 3); err != nil || got != isFull {
		t.Fatalf("a fourth join in a room of 3 places: %q, %v; want %q", got, err, isFull)
	}
	if got, _ := st.join(ctx, 1, 2, 3); got != have {
		t.Errorf("a member joining again in a full room: %q, want %q", got, have)
	}
	if res, err := st.admit(ctx, 1, Pace{MinRate: 1, MaxRate: 1, TTL: time.Minute}); err != nil || res.admitted != 1 {
		t.Fatalf("admit one: %+v, %v", res, err)
	}
	if got, err := st.join(ctx, 1, 4, 3); err != nil || got != joined {
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
	for _, k := range st.userKeys(1) {
		at, err := rdb.PExpireTime(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if at == -2 && k == keys.WaitingAdmitted(st.prefix, 1) {
			continue // the one admission was used up: the set is gone
		}
		if got := time.UnixMilli(at.Milliseconds()); !got.Equal(want) {
			t.Errorf("%s expires at %v (%v), want %v: 24 h after the end", k, got, at, want)
		}
	}
	if ttl, err := rdb.PTTL(ctx, keys.WaitingRooms(st.prefix)).Result(); err != nil || ttl != -1 {
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
