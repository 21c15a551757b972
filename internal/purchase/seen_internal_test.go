package purchase

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// seenRooms counts the admission checks, each of which records an admitted
// buyer as seen (waitingroom.Room.Admitted).
type seenRooms struct {
	noRooms
	checks int
}

func (r *seenRooms) On(int64) bool { return true }
func (r *seenRooms) Admitted(context.Context, int64, int64, time.Duration) (bool, bool, error) {
	r.checks++
	return true, true, nil
}

// A buyer whose purchase waited in the queue and was answered to try again
// is present: they are recorded as seen, so the idle lapse does not take
// their admission before their retry. Final answers record nothing.
// Seen in room.sh --no-show 0.5: 239 admitted buyers answered
// 429 busy after the queue's wait lapsed before they polled again.
// Can fail: with seenAfterRetry's body gone, no answer records the buyer;
// with its code check gone, final answers count too.
func TestARetryAnswerRecordsTheBuyerSeen(t *testing.T) {
	rooms := &seenRooms{}
	s := &Service{rooms: rooms}
	a := seckill.Activity{ID: 1}
	for _, err := range []error{
		seckill.Busy("queue wait over", nil),
		seckill.Unavailable("redis down", errors.New("x")),
		seckill.Errorf(seckill.EOutcomeUnknown, "commit unknown"),
	} {
		s.seenAfterRetry(context.Background(), a, 7, err)
	}
	if rooms.checks != 3 {
		t.Errorf("%d of 3 answers to try again recorded the buyer seen", rooms.checks)
	}
	rooms.checks = 0
	for _, err := range []error{seckill.Errorf(seckill.ESoldOut, "sold out"), errors.New("plain")} {
		s.seenAfterRetry(context.Background(), a, 7, err)
	}
	if rooms.checks != 0 {
		t.Errorf("a final answer recorded the buyer seen (%d)", rooms.checks)
	}
}
