package purchase

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
)

// failSettles makes the client's settles (two-key scripts: the stock hash
// and a grant's receipt) fail while on is set, as a Redis that stops
// answering right after a deduct would.
type failSettles struct{ on *atomic.Bool }

func (failSettles) DialHook(next redis.DialHook) redis.DialHook { return next }
func (failSettles) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f failSettles) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if f.on.Load() && (cmd.Name() == "evalsha" || cmd.Name() == "eval") && len(args) > 2 && fmt.Sprint(args[2]) == "2" {
			err := &net.OpError{Op: "read", Err: errors.New("settle cut by the test")}
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// A batch whose order write failed, and whose settle then failed too (Redis
// stopped answering), leaves its units deducted, and its buyer is told 503
// (nothing was sold). The buyer's retry inside the same admission must not
// take a second hold: the batch is written down, as one of unknown outcome
// is, and the retry first gives its units back. User 2, admitted, must then
// get the other unit.
// Can fail: without the batch written down, the retry either takes a second
// unit for one admission (and user 2 is told sold_out), or, refused as a
// purchase in flight, is told busy until the receipt expires.
func TestFailedSettleAfterAFailedWriteTakesNoSecondHold(t *testing.T) {
	s, _, a := roomFixture(t, 2)
	ctx := context.Background()
	var cut atomic.Bool
	redisOf(s).AddHook(failSettles{on: &cut})
	admitUser(t, s, a.ID, 1)
	admitUser(t, s, a.ID, 2)

	q, sl := deductedSale(t, s, a, 1)
	cut.Store(true)
	sl.afterFailedWrite(errors.New("the order database failed"))
	cut.Store(false)
	sl.finishAdmissions()
	s.sell.dropHold(q)
	if c := codeOf(sl.b.outs[0].err); c != seckill.EUnavailable {
		t.Fatalf("user 1's first attempt: %v, want unavailable", sl.b.outs[0].err)
	}

	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1}); err != nil {
		t.Fatalf("user 1 retries inside the admission: %v (%s), want an order", err, codeOf(err))
	}
	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 2}); err != nil {
		t.Errorf("user 2, admitted, buys: %v (%s), want an order", err, codeOf(err))
	}
	if left, err := s.stock.Remaining(ctx, a.ID); err != nil || left != 0 {
		t.Errorf("remaining %d, %v: want 0, one unit for each of the two orders", left, err)
	}
}
