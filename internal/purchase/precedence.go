package purchase

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// attempt is a purchase as its checks see it before it may queue.
type attempt struct {
	ctx context.Context
	a   seckill.Activity
	req seckill.BuyRequest
	now time.Time
}

// buyCheck answers the attempt (done) or lets it go on to the next check.
type buyCheck func(s *Service, at *attempt) (o seckill.Order, err error, done bool)

// buyChecks are the purchase's checks before its queue, in the contract's
// order (seckill.Precedence). The deduct makes the stock's and the stop's
// checks again, atomically; these keep a refused buyer out of the queue.
var buyChecks = seckill.Checks(seckill.RouteBuy, map[string]buyCheck{
	"not_started": func(s *Service, at *attempt) (seckill.Order, error, bool) {
		if !at.now.Before(at.a.StartsAt) {
			return seckill.Order{}, nil, false
		}
		return seckill.Order{}, s.notStarted(at.ctx, at.a), true
	},
	"already_purchased": (*Service).answerSeenBuyer,
	"ended": func(_ *Service, at *attempt) (seckill.Order, error, bool) {
		if at.now.Before(at.a.EndsAt) {
			return seckill.Order{}, nil, false
		}
		return seckill.Order{}, seckill.Ended(at.a), true
	},
	"paused": func(s *Service, at *attempt) (seckill.Order, error, bool) {
		err, refused := s.refusePaused(at.a, at.req, at.now)
		return seckill.Order{}, err, refused
	},
	"idempotency_key": (*Service).answerKey,
	"not_admitted": func(s *Service, at *attempt) (seckill.Order, error, bool) {
		err, refused := s.refuseUnadmitted(at.ctx, at.a, at.req.UserID)
		return seckill.Order{}, err, refused
	},
	"user_rejected": func(s *Service, at *attempt) (seckill.Order, error, bool) {
		if e, ok := s.rejected.recent(buyer{at.a.ID, at.req.UserID}, at.now); ok {
			return seckill.Order{}, e, true
		}
		return seckill.Order{}, nil, false
	},
	// An activity with a room is never answered from the mark: a unit can
	// come back on another instance (a stock change, an expiry, a settle)
	// and be admitted to a buyer before this mark is a second old; the
	// deduct, which counts admissions, answers them.
	"sold_out": func(s *Service, at *attempt) (seckill.Order, error, bool) {
		if hasRoom(s.rooms, at.a) || !s.soldOut.fresh(at.a.ID, at.now) {
			return seckill.Order{}, nil, false
		}
		return seckill.Order{}, soldOut(), true
	},
})

// holderFirst is where already_purchased stands among buyChecks: a check
// after it that answers "no order" is answered already_purchased instead
// for a holder. The holder is looked up only then, never for every buyer.
var holderFirst = func() int {
	for i, c := range buyChecks {
		if c.Name == "already_purchased" {
			return i
		}
	}
	return len(buyChecks)
}()

// answerUnqueued walks buyChecks: it answers, when it can, without a queue
// slot. done is false when the buyer must queue.
func (s *Service) answerUnqueued(ctx context.Context, a seckill.Activity, req seckill.BuyRequest) (o seckill.Order, err error, done bool) {
	at := attempt{ctx: ctx, a: a, req: req, now: s.now()}
	for i, c := range buyChecks {
		if o, err, done = c.Check(s, &at); !done {
			continue
		}
		if i > holderFirst && finalNoOrder(err) {
			err = s.holders.holderOr(ctx, a.ID, req.UserID, err)
		}
		return o, err, true
	}
	return seckill.Order{}, nil, false
}

// answerSeenBuyer answers a buyer this process saw buy in the activity
// (answerBought) while the window is open. After the end every instance
// answers a holder alike, from the holder look-up that follows the end's
// refusal, whatever their key: the instance that sold says no more than the
// others. Before the key's look-up: a buyer who spams fresh keys after
// buying costs no key look-up each.
func (s *Service) answerSeenBuyer(at *attempt) (seckill.Order, error, bool) {
	if !at.now.Before(at.a.EndsAt) {
		return seckill.Order{}, nil, false
	}
	if _, ok := s.bought.orderOf(at.a.ID, at.req.UserID); !ok {
		return seckill.Order{}, nil, false
	}
	return s.answerBought(at.ctx, at.a.ID, at.req)
}

// answerKey answers a repeat of an idempotency key with its order.
func (s *Service) answerKey(at *attempt) (seckill.Order, error, bool) {
	if at.req.IdempotencyKey == "" {
		return seckill.Order{}, nil, false
	}
	o, err := s.holders.orderByKey(at.ctx, at.req.UserID, at.req.IdempotencyKey)
	switch {
	case err == nil:
		o, err := replay(o, at.req)
		return o, err, true
	case !errors.Is(err, order.ErrNotFound):
		return seckill.Order{}, seckill.DatabaseDown(err), true
	}
	return seckill.Order{}, nil, false
}
