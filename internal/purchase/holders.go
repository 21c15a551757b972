package purchase

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
)

// Precedence (docs/API.md): a buyer who holds an order of the activity is
// told already_purchased, with the order's id and status, whatever else
// holds; sold_out and ended are final answers that say the caller has no
// order. A buyer whose 201 was lost and who asks again on another instance
// after the sell-out must hear about the order they hold.
//
// The check costs nothing for most of a sold-out storm's answers: the buyer
// set in Redis, which the deduct writes atomically with the units it takes,
// answers all of a batch's buyers in one round trip, and only a member (a
// holder, or a buyer whose unit went back) costs a database read.

// finalNoOrder reports whether err is an answer that says the caller has no
// order, which a holder must not get.
func finalNoOrder(err error) bool {
	// errors.AsType, not errors.As: As's target escapes, an allocation per
	// buyer of every batch, most of whom have no error at all.
	e, ok := errors.AsType[*seckill.Error](err)
	return ok && (e.Code == seckill.ESoldOut || e.Code == seckill.EEnded ||
		e.Code == seckill.ENotStarted || e.Code == seckill.ENotAdmitted || e.Code == seckill.EPaused)
}

// preferHolders replaces, among the batch's outcomes, each final "no order"
// answer of a buyer who holds an order by already_purchased.
func (s *sale) preferHolders() {
	b := s.b
	var users []int64
	for i, t := range b.tickets {
		if finalNoOrder(b.outs[i].err) {
			users = append(users, t.req.UserID)
		}
	}
	if len(users) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	held := s.heldOrders(ctx, b.activity.ID, users)
	for i, t := range b.tickets {
		if o, ok := held[t.req.UserID]; ok && finalNoOrder(b.outs[i].err) {
			b.outs[i] = outcome{err: seckill.Holds(o)}
		}
	}
}

// answerHolders answers, before a batch takes the lock, the pending buyers
// who already hold an order: already_purchased, or their order again for a
// repeat with its idempotency key. They take no unit: a unit deducted for a
// holder would go back after the database's unique key refused the order,
// while the batch might have told another buyer "sold out". It returns the
// pending buyers left, after waiting for their writes in flight where a
// waiting room counts one unit per admission (writesinflight.go).
func (s *sale) answerHolders(pending []int) []int {
	b := s.b
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	held := s.heldOrders(ctx, b.activity.ID, b.users(pending))
	if len(held) == 0 {
		return s.awaitWritesInFlight(pending)
	}
	left := pending[:0:0]
	for _, i := range pending {
		o, ok := held[b.req(i).UserID]
		switch {
		case !ok:
			left = append(left, i)
		case o.IdempotencyKey != "" && o.IdempotencyKey == b.req(i).IdempotencyKey:
			b.outs[i].order = o
		default:
			b.outs[i].err = seckill.Holds(o)
		}
	}
	return s.awaitWritesInFlight(left)
}

// holderOr returns already_purchased when the user holds an order of the
// activity, and otherwise err, a final "no order" answer.
func (s *Service) holderOr(ctx context.Context, activityID, userID int64, err error) error {
	if o, ok := s.heldOrders(ctx, activityID, []int64{userID})[userID]; ok {
		return seckill.Holds(o)
	}
	return err
}

// heldOrders returns, by user, the orders of the activity that the users
// hold. It asks the database only about users this process saw buy or the
// buyer set names. A look-up that fails counts as "holds none", except that
// this process still knows its own buyers' order ids (without a status): the
// answer is then the one the buyer would have had before precedence
// existed, never a made-up order.
func (s *Service) heldOrders(ctx context.Context, activityID int64, users []int64) map[int64]seckill.Order {
	held := make(map[int64]seckill.Order)
	maybe := make([]int64, 0, len(users))
	var unknown []int64
	for _, u := range users {
		if _, ok := s.bought.orderOf(activityID, u); ok {
			maybe = append(maybe, u)
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		in, err := s.buyers.in(ctx, activityID, unknown)
		if err != nil {
			s.log.Warn("buyer set not read; holders may be told they have no order", "activity_id", activityID, "err", err)
		}
		for _, u := range unknown {
			if in[u] {
				maybe = append(maybe, u)
			}
		}
	}
	if len(maybe) == 0 {
		return held
	}
	orders, err := s.orders.Orders.OrdersByUsers(ctx, activityID, maybe)
	if err != nil {
		for _, u := range maybe {
			if id, ok := s.bought.orderOf(activityID, u); ok {
				held[u] = seckill.Order{ID: id, ActivityID: activityID, UserID: u}
			}
		}
		return held
	}
	for u, o := range orders {
		s.bought.remember(o)
		held[u] = o
	}
	return held
}
