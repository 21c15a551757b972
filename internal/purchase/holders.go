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
	var e *seckill.Error
	return errors.As(err, &e) && (e.Code == seckill.ESoldOut || e.Code == seckill.EEnded || e.Code == seckill.ENotStarted)
}

// preferHolders replaces, among the tickets' outcomes, each final "no order"
// answer of a buyer who holds an order by already_purchased.
func (s *Service) preferHolders(activityID int64, tickets []*ticket, outs []outcome) {
	var users []int64
	for i, t := range tickets {
		if finalNoOrder(outs[i].err) {
			users = append(users, t.req.UserID)
		}
	}
	if len(users) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), detachedTimeout)
	defer cancel()
	held := s.holders(ctx, activityID, users)
	for i, t := range tickets {
		if e, ok := held[t.req.UserID]; ok && finalNoOrder(outs[i].err) {
			outs[i] = outcome{err: e}
		}
	}
}

// holderOr returns already_purchased when the user holds an order of the
// activity, and otherwise err, a final "no order" answer.
func (s *Service) holderOr(ctx context.Context, activityID, userID int64, err error) error {
	if e, ok := s.holders(ctx, activityID, []int64{userID})[userID]; ok {
		return e
	}
	return err
}

// holders returns already_purchased, by user, for those of the users who
// hold an order of the activity. A look-up that fails counts as "holds
// none": the answer is then the one the buyer would have had before
// precedence existed, never a made-up order.
func (s *Service) holders(ctx context.Context, activityID int64, users []int64) map[int64]error {
	held := make(map[int64]error)
	var maybe []int64
	for _, u := range users {
		if _, ok := s.bought.Load(buyer{activityID, u}); ok {
			maybe = append(maybe, u)
		}
	}
	if len(maybe) < len(users) {
		in, err := s.stock.Holders(ctx, activityID, users)
		if err != nil {
			s.log.Warn("buyer set not read; holders may be told they have no order", "activity_id", activityID, "err", err)
		}
		for _, u := range users {
			if _, mem := s.bought.Load(buyer{activityID, u}); in[u] && !mem {
				maybe = append(maybe, u)
			}
		}
	}
	if len(maybe) == 0 {
		return held
	}
	orders, err := s.orders.OrdersByUsers(ctx, activityID, maybe)
	if err != nil {
		// The memory still knows its own buyers' orders, without a status.
		for _, u := range maybe {
			if id, ok := s.bought.Load(buyer{activityID, u}); ok {
				held[u] = alreadyPurchased(id.(string))
			}
		}
		return held
	}
	for u, o := range orders {
		s.remember(o)
		held[u] = holds(o)
	}
	return held
}

// holds is already_purchased for a buyer holding o.
func holds(o seckill.Order) *seckill.Error {
	e := alreadyPurchased(o.ID)
	e.OrderStatus = o.Status
	return e
}

