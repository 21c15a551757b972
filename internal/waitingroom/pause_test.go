package waitingroom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// A pause keeps the admissions open when it began (docs/API.md "Stopping a
// sale"): during it, queue/mine still answers admitted (the time moves on
// at the resume) and records the buyer as seen; a join answers paused, also
// to a buyer with a place; after the resume, the idle lapse counts only the
// time outside the pause, for those who did not poll during it too.
// Can fail: queue/mine answers lapsed once admitted_until passes during the
// pause (and stops recording the buyer as seen); the join answers the
// place; right after the resume user 2, last seen before the pause, lapses
// as idle.
func TestPauseKeepsAdmissionsAndTheirIdleClock(t *testing.T) {
	st, sk, _ := openRoom(t, 0, 2)
	ctx := context.Background()
	now := time.Now()
	a := seckill.Activity{ID: 1, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Hour)}}
	r, err := New(Config{AdmissionIdle: 400 * time.Millisecond}, Deps{Store: st,
		Activity: func(context.Context, int64) (seckill.Activity, error) { return a, nil }})
	if err != nil {
		t.Fatal(err)
	}
	mustJoin(t, st, 1, 2)
	p := Pace{MinRate: 1000, MaxRate: 1000, TTL: 500 * time.Millisecond, Idle: 400 * time.Millisecond}
	if res, err := st.admit(ctx, 1, p); err != nil || res.admitted != 2 {
		t.Fatalf("admit both: %+v, %v", res, err)
	}
	for _, u := range []int64{1, 2} {
		if err := st.seen(ctx, 1, u, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := sk.Pause(ctx, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // past the admissions' TTL and the idle time
	q, err := r.Mine(ctx, 1, 1)
	if err != nil || q.State != seckill.QueueAdmitted || !q.AdmittedUntil.After(time.Now()) {
		t.Errorf("user 1's queue/mine during the pause: %+v, %v; want admitted, until after now", q, err)
	}
	var se *seckill.Error
	if _, err := r.Join(ctx, 1, 1); !errors.As(err, &se) || se.Code != seckill.EPaused {
		t.Errorf("user 1 (admitted) joins during the pause: %v, want paused", err)
	}
	if res, err := st.admit(ctx, 1, p); err != nil || res.lapsed != 0 {
		t.Fatalf("a step during the pause: %+v, %v; want nothing lapsed", res, err)
	}
	if _, err := sk.Resume(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if res, err := st.admit(ctx, 1, p); err != nil || res.lapsed != 0 {
		t.Errorf("a step right after the resume: %+v, %v; want nothing lapsed", res, err)
	}
	wantAdmitted(t, st, map[int64]bool{1: true, 2: true})
}
