package waitingroom

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// With no user check (approve-all) a join is one call, and a member of the
// buyer set, who may hold an order, still gets already_purchased and no
// place; anyone else gets a place, and joining again keeps it.
// Can fail: without join.lua's buyer answer, the one call gives the holder
// a place in the line.
func TestOneCallJoinStillRefusesHolders(t *testing.T) {
	st, _, rdb := openRoom(t, time.Minute, 10)
	ctx := context.Background()
	now := time.Now()
	a := seckill.Activity{ID: 1, StartsAt: now.Add(time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Minute)}}
	var asked []bool
	r, err := New(Config{}, Deps{Store: st,
		Activity: func(context.Context, int64) (seckill.Activity, error) { return a, nil },
		Holder: func(_ context.Context, _, userID int64, inBuyers bool) (seckill.Order, bool) {
			asked = append(asked, inBuyers)
			if userID == 5 && inBuyers {
				return seckill.Order{ID: "o5", ActivityID: 1, UserID: 5, Status: seckill.OrderStatusCreated}, true
			}
			return seckill.Order{}, false
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, st.space.Buyers(1), 5).Err(); err != nil {
		t.Fatal(err)
	}
	var se *seckill.Error
	if _, err := r.Join(ctx, 1, 5); !errors.As(err, &se) || se.Code != seckill.EAlreadyPurchased {
		t.Errorf("a holder's join: %v, want already_purchased", err)
	}
	for range 2 {
		if q, err := r.Join(ctx, 1, 6); err != nil || q.State != seckill.QueuePrequeue {
			t.Errorf("a join: %+v, %v; want a pre-queue place", q, err)
		}
	}
	line, err := rdb.ZRange(ctx, st.space.WaitingLine(1), 0, -1).Result()
	if err != nil || len(line) != 1 || line[0] != "6" {
		t.Errorf("the line %v, %v; want user 6 alone", line, err)
	}
	// The holder was asked without the buyer bit once a join (this
	// process's own buyers), and with it only for user 5.
	if want := []bool{false, true, false, false}; !slices.Equal(asked, want) {
		t.Errorf("holder asked %v, want %v", asked, want)
	}
}

// Ops ended the sale before its start and the room's end was not rewritten
// (that write failed): the stock's ended flag alone refuses the join.
// Can fail: without join.lua's read of the flag, the user gets a pre-queue
// place in a sale that never starts.
func TestJoinRefusedByTheStocksEndedFlag(t *testing.T) {
	st, _, rdb := openRoom(t, time.Minute, 10)
	ctx := context.Background()
	if err := rdb.HSet(ctx, st.space.Stock(1), "ended", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := st.join(ctx, 1, 7, DefaultMaxPlaces, true); err != nil || got != isEnded {
		t.Errorf("a join after ops' end before the start: %q, %v; want %q", got, err, isEnded)
	}
}
