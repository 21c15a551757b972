package books_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

// A waiting room given later to an unannounced activity is refused as at
// its creation, also when it opens exactly at the start: joins before the
// start answer 404, so the room could hold no draw. Nothing is stored.
// Can fail: with the old check (opens_at before starts_at only), the room
// opening at the start was stored.
func TestUnannouncedActivityGetsNoRoomAtItsStart(t *testing.T) {
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	svc, _ := wiring.OnReal(t, testenv.Redis(t), testenv.MySQLDSN(t), app.Config{Keys: keys.NewSpace(prefix), Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}}, nil, nil)
	starts := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	act, err := svc.CreateActivity(ctx, seckill.Activity{Name: "secret", TotalStock: 2, StartsAt: starts, EndsAt: starts.Add(time.Hour), Unannounced: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetWaitingRoom(ctx, act.ID, starts); codeOf(err) != seckill.EInvalid {
		t.Errorf("a room opening at the start of an unannounced activity: %v, want invalid_request", err)
	}
	if v, err := svc.Activity(ctx, act.ID); err != nil || v.WaitingRoom != nil {
		t.Errorf("after the refusal: room %+v, %v; want none", v.WaitingRoom, err)
	}
}
