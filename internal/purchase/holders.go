package purchase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sethvargo/go-retry"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
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

// holders finds who holds an order of an activity, for the buyer's side
// and the batches alike.
type holders struct {
	orders *order.Store
	buyers *buyerSet
	bought *boughtMemory
	log    *slog.Logger
	// orderByKey is the look-up of a user's order by idempotency key
	// (orders.OrderByIdempotencyKey); tests count its calls.
	orderByKey func(ctx context.Context, userID int64, key string) (seckill.Order, error)
}

// finalNoOrder reports whether err is an answer that says the caller has no
// order, which a holder must not get.
func finalNoOrder(err error) bool {
	// errors.AsType, not errors.As: As's target escapes, an allocation per
	// buyer of every batch, most of whom have no error at all.
	e, ok := errors.AsType[*seckill.Error](err)
	return ok && (e.Code == seckill.ESoldOut || e.Code == seckill.EEnded ||
		e.Code == seckill.ENotStarted || e.Code == seckill.ENotAdmitted || e.Code == seckill.EPaused)
}

// prefer answers already_purchased instead of each final "no order"
// outcome of the batch given to a buyer who holds an order.
func (h *holders) prefer(b *batch) []answer {
	var users []int64
	for i, t := range b.tickets {
		if finalNoOrder(b.outs[i].err) {
			users = append(users, t.req.UserID)
		}
	}
	if len(users) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	held := h.held(ctx, b.activity.ID, users)
	var said []answer
	for i, t := range b.tickets {
		if o, ok := held[t.req.UserID]; ok && finalNoOrder(b.outs[i].err) {
			said = append(said, answer{i, outcome{err: seckill.Holds(o)}})
		}
	}
	return said
}

// answer answers, before a batch takes the lock, the buyers in who already
// hold an order: already_purchased, or their order again for a repeat with
// its idempotency key. They take no unit: a unit deducted for a holder
// would go back after the database's unique key refused the order, while
// the batch might have told another buyer "sold out". The others go on,
// after waiting for their writes in flight where a waiting room (room)
// counts one unit per admission (writesinflight.go).
func (h *holders) answer(b *batch, in []int, room bool) ([]int, []answer) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	held := h.held(ctx, b.activity.ID, b.users(in))
	var said []answer
	if len(held) > 0 {
		left := in[:0:0]
		for _, i := range in {
			if o, ok := held[b.req(i).UserID]; ok {
				o, err := b.req(i).AnswerHolder(o)
				said = append(said, answer{i, outcome{o, err}})
			} else {
				left = append(left, i)
			}
		}
		in = left
	}
	if !room {
		return in, said
	}
	in, waited := h.writesInFlight(b, in)
	return in, append(said, waited...)
}

// holderOr returns already_purchased when the user holds an order of the
// activity, and otherwise err, a final "no order" answer.
func (h *holders) holderOr(ctx context.Context, activityID, userID int64, err error) error {
	if o, ok := h.held(ctx, activityID, []int64{userID})[userID]; ok {
		return seckill.Holds(o)
	}
	return err
}

// held returns, by user, the orders of the activity that the users hold.
// It asks the database only about users this process saw buy or the buyer
// set names. A look-up that fails counts as "holds none", except that this
// process still knows its own buyers' order ids (without a status): the
// answer is then the one the buyer would have had before precedence
// existed, never a made-up order.
func (h *holders) held(ctx context.Context, activityID int64, users []int64) map[int64]seckill.Order {
	held := make(map[int64]seckill.Order)
	maybe := make([]int64, 0, len(users))
	var unknown []int64
	for _, u := range users {
		if _, ok := h.bought.orderOf(activityID, u); ok {
			maybe = append(maybe, u)
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		in, err := h.buyers.in(ctx, activityID, unknown)
		if err != nil {
			h.log.Warn("buyer set not read; holders may be told they have no order", "activity_id", activityID, "err", err)
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
	orders, err := h.orders.Orders.OrdersByUsers(ctx, activityID, maybe)
	if err != nil {
		h.log.Warn("orders of buyers not read; only this process's own buyers are told they hold one", "activity_id", activityID, "users", len(maybe), "err", err)
		for _, u := range maybe {
			if id, ok := h.bought.orderOf(activityID, u); ok {
				held[u] = seckill.Order{ID: id, ActivityID: activityID, UserID: u}
			}
		}
		return held
	}
	for u, o := range orders {
		h.bought.remember(o)
		held[u] = o
	}
	return held
}

// errKeptOutUnexplained is the cause of the answer to a buyer whose order a
// unique key kept out, while the database holds neither an order of the
// buyer nor one of the request's idempotency key.
var errKeptOutUnexplained = errors.New("purchase: order kept out by a unique key, yet neither an order of the buyer nor one of its idempotency key found")

// explain answers the buyers whose orders a unique key kept out of a
// committed write, in order: each already holds an order of the activity (a
// repeat with the same idempotency key gets that order again), or used the
// idempotency key for another order. One query finds the holders; only a
// buyer who holds none (a key used elsewhere, rare) costs one more.
func (h *holders) explain(lease context.Context, activityID int64, orders []seckill.Order) []outcome {
	outs, none, err := h.keptOutAfter(lease, activityID, orders)
	for k := range outs {
		switch {
		case err != nil:
			outs[k].err = seckill.Unavailable("the order database did not answer why the order was kept out; nothing was sold", fmt.Errorf("kept-out orders of activity %d: %w", activityID, err))
		case none[k]:
			outs[k].err = seckill.Unavailable("the order database refused the order, and holds neither an order of this user nor one of this Idempotency-Key; nothing was sold", errKeptOutUnexplained)
		}
	}
	return outs
}

// keptOutAfter is keptOut after a batch's write, which may have ended late
// in the lease or after it (a COMMIT that landed late, a look-up that waited
// for it): it reads on detached contexts of its own, asking up to three
// times, since an answer from a context already over would tell buyers the
// database did not answer and give back units their orders may hold.
func (h *holders) keptOutAfter(lease context.Context, activityID int64, orders []seckill.Order) (outs []outcome, none []bool, err error) {
	err = lock.RetryDetached(lease, func(dctx context.Context) (err error) {
		outs, none, err = h.keptOut(dctx, activityID, orders)
		return retry.RetryableError(err)
	})
	return outs, none, err
}

// keptOut learns why the orders of the activity were not written though their batch's
// transaction committed: each buyer holds an order of the activity
// (already_purchased, or that order again for a repeat of its idempotency
// key), used the key for another order (the replay's answer), or neither
// (none[k]: the database had no unit for it).
func (h *holders) keptOut(ctx context.Context, activityID int64, orders []seckill.Order) (outs []outcome, none []bool, err error) {
	outs, none = make([]outcome, len(orders)), make([]bool, len(orders))
	users := make([]int64, len(orders))
	for k, o := range orders {
		users[k] = o.UserID
	}
	held, err := h.orders.Orders.OrdersByUsers(ctx, activityID, users)
	if err != nil {
		return outs, none, err
	}
	for k, o := range orders {
		req := seckill.BuyRequest{ActivityID: activityID, UserID: o.UserID, IdempotencyKey: o.IdempotencyKey}
		if existing, ok := held[req.UserID]; ok {
			h.bought.remember(existing)
			outs[k].order, outs[k].err = req.AnswerHolder(existing)
			continue
		}
		if req.IdempotencyKey != "" {
			first, err := h.orderByKey(ctx, req.UserID, req.IdempotencyKey)
			switch {
			case err == nil:
				outs[k].order, outs[k].err = replay(first, req)
				continue
			case !errors.Is(err, order.ErrNotFound):
				return outs, none, err
			}
		}
		none[k] = true
	}
	return outs, none, nil
}
