package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sethvargo/go-retry"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/crashpoint"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// The three triggers of one verification, as the trigger label.
const (
	triggerCallback   = "callback"
	triggerResultPage = "result_page"
	triggerDelayQueue = "delay_queue"
)

// errBusy: another trigger holds the order's lock.
var errBusy = errors.New("payment: another verification of the order is running")

// verify runs the verification of o for trigger and returns the order after
// it. An error means the order was left as it was and must be verified again
// later (unknown answer, busy lock, failed write); the verification outcome
// is counted either way.
func (s *Service) verify(ctx context.Context, o seckill.Order, trigger string) (seckill.Order, error) {
	v, outcome, err := s.verifyOnce(ctx, o, trigger)
	s.m.verified(trigger, outcome)
	return v, err
}

// wants reports whether a verification from trigger can change o: a created
// order can become paid or expired; only the provider's callback looks for a
// late payment of an expired order.
func wants(o seckill.Order, trigger string) bool {
	switch o.Status {
	case seckill.OrderStatusCreated:
		return true
	case seckill.OrderStatusExpired:
		return trigger == triggerCallback
	}
	return false
}

func (s *Service) verifyOnce(ctx context.Context, o seckill.Order, trigger string) (seckill.Order, string, error) {
	if !wants(o, trigger) {
		return o, outcomeSettled, nil
	}
	// The delay queue never waits: whoever holds the lock is verifying the
	// order right now. A callback or a page waits up to one lease for the
	// answer the holder is about to write.
	var wait time.Duration
	if trigger != triggerDelayQueue {
		wait = s.cfg.LockTTL
	}
	lk, err := s.locks.Obtain(ctx, s.lockKey(o), s.cfg.LockTTL, &lock.ObtainOptions{
		Wait:      wait,
		AutoRenew: true, // the watchdog: renewed until Release, whatever the outcome
		FenceOf:   s.fenceLockKey(o.ActivityID),
	})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return o, outcomeBusy, fmt.Errorf("%w: order %s: %w", errBusy, o.ID, err)
	case err != nil:
		return o, outcomeUnknown, fmt.Errorf("payment: lock order %s: %w", o.ID, err)
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "payment: order lock release", "order_id", o.ID, "fence", lk.Fence(), "err", err)
		}
	}()
	return s.verifyHolding(lk, o.ID, trigger)
}

// verifyHolding is the part of a verification done under the order's lock.
// Every call it makes derives from the lease context.
func (s *Service) verifyHolding(lk *lock.Lock, orderID, trigger string) (seckill.Order, string, error) {
	lease := lk.Context()
	// Read again under the lock: another trigger may have settled the order
	// while this one waited, and then the provider need not be asked.
	o, err := s.orders.Orders.OrderByID(lease, orderID)
	if err != nil {
		return seckill.Order{}, outcomeUnknown, fmt.Errorf("payment: read order %s: %w", orderID, err)
	}
	if !wants(o, trigger) {
		return o, outcomeSettled, nil
	}

	budget := lk.CallBudget(s.cfg.ProviderTimeout)
	if budget <= 0 {
		return o, outcomeUnknown, fmt.Errorf("payment: order %s: the lease ran out before the provider could be asked: %w", o.ID, context.DeadlineExceeded)
	}
	// Counted before the query starts, under the lock, and marked answered
	// once its answer is written: a callback that read a lower count when it
	// arrived knows, once it holds the lock and finds a higher number
	// answered, that a query begun after it came has decided the order
	// (callback.go). A query that failed decides nothing.
	n := s.counts.count(lease, o)
	pctx, cancel := context.WithTimeout(lease, budget)
	p, err := s.provider.Check(pctx, o.ID)
	cancel()
	if err != nil {
		return o, outcomeUnknown, err
	}
	v, outcome, err := s.apply(lk, o, p)
	if err == nil {
		s.counts.markAnswered(lease, o, n)
	}
	return v, outcome, err
}

// apply writes what the provider's answer p decides for o, under lk. The
// answer decides once per status the order is found in: when another
// writer moved the order meanwhile (a trigger whose lease ran out), the
// same answer decides again from where the order now is, so a payment that
// meets an expired order becomes refund_required instead of being
// acknowledged as expired.
func (s *Service) apply(lk *lock.Lock, o seckill.Order, p Payment) (seckill.Order, string, error) {
	lease := lk.Context()
	outcome := outcomeUnchanged
	for range len(allowedFrom) + 1 {
		to, reason := decide(o, p, s.now(), proofOf(s.cfg))
		if to == "" {
			return o, outcome, nil
		}
		change := order.StatusChange{OrderID: o.ID, ActivityID: o.ActivityID, From: o.Status, To: to, RefundReason: reason, Fence: lk.Fence()}
		if to != seckill.OrderStatusExpired {
			change.PaidAt = p.PaidAt
		}
		var (
			v   seckill.Order
			err error
		)
		if o.Status == seckill.OrderStatusCreated && !seckill.HoldsUnit(to) {
			v, outcome, err = s.expire(lease, o, change) // the unit goes back
		} else {
			v, outcome, err = s.write(lease, o, change)
		}
		if !errors.Is(err, errMoved) {
			return v, outcome, err
		}
		o, outcome = v, outcomeSettled
	}
	return o, outcomeSettled, nil
}

// allowedFrom bounds the re-decisions: an order can move away from each of
// these statuses once.
var allowedFrom = []string{seckill.OrderStatusCreated, seckill.OrderStatusExpired}

// errMoved: the status change found the order in another status, written
// by another verification; the order returned is as it now is.
var errMoved = errors.New("payment: the order's status moved since it was read")

// decide is the verification's rule: what the provider's answer p makes of
// order o at now, or "" for no change, and with refund_required why. A paid
// answer that does not match the order (match.go) never makes it paid.
func decide(o seckill.Order, p Payment, now time.Time, want proof) (to, reason string) {
	switch o.Status {
	case seckill.OrderStatusCreated:
		if p.Status == PaymentPaid {
			return settle(o, p, want)
		}
		if !o.PayBy.IsZero() && !now.Before(o.PayBy) {
			return seckill.OrderStatusExpired, "" // pending, failed or none, and the window is over
		}
	case seckill.OrderStatusExpired:
		if p.Status == PaymentPaid {
			// Paid late: the unit is not taken back. A payment that also
			// does not match says so.
			if why := mismatch(o, p, want); why != "" {
				return seckill.OrderStatusRefundRequired, why
			}
			return seckill.OrderStatusRefundRequired, seckill.RefundPaidLate
		}
	}
	return "", ""
}

// expire writes a created order's change to a status that holds no unit
// (expired; refund_required for a payment that does not match) and gives
// the unit back to Redis.
func (s *Service) expire(lease context.Context, o seckill.Order, change order.StatusChange) (seckill.Order, string, error) {
	// The stock's epoch before the database forgets the unit: if the stock
	// is reloaded after this point, the reload may count the unit as unsold
	// already, and the return must not add it again.
	epoch, err := s.stock.Epoch(lease, o.ActivityID)
	loaded := err == nil
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		// Nothing to give back to: the next load counts the unit from the database.
	case err != nil:
		return o, outcomeUnknown, fmt.Errorf("payment: expire order %s: %w", o.ID, err)
	}
	v, outcome, err := s.write(lease, o, change)
	if errors.Is(err, order.ErrCommitUnknown) && loaded && v.Status != "" && !seckill.HoldsUnit(v.Status) {
		// Whether this change landed is not known, but the order holds no
		// unit any more: this change or a later grant's took it. The
		// return's receipt (the order id) gives it back exactly once, with
		// whichever expiry gets there first; the epoch, read before this
		// change's UPDATE locked the order, is stale if a reload counted it.
		s.giveBack(lease, v, epoch)
		return v, outcome, err
	}
	if err != nil || outcome != change.To || !loaded {
		return v, outcome, err
	}
	crashpoint.Hit(crashpoint.AfterExpiry)
	s.giveBack(lease, v, epoch)
	return v, outcome, nil
}

// write applies change and returns the order after it.
func (s *Service) write(lease context.Context, o seckill.Order, change order.StatusChange) (seckill.Order, string, error) {
	err := s.changeStatus(lease, change)
	switch {
	case err == nil:
	case errors.Is(err, order.ErrCommitUnknown):
		// A locking read: a plain one misses a COMMIT still in flight,
		// skips the give-back, and the unit is lost when it lands. It waits
		// behind every transaction on the activity's row (other expiries),
		// so it is asked up to three times, each with a fresh deadline: a
		// change that landed but was not learned is neither counted nor,
		// for an expiry, given back.
		var got seckill.Order
		rerr := lock.RetryDetached(lease, func(dctx context.Context) (err error) {
			got, err = s.orders.Orders.OrderLocked(dctx, o.ActivityID, o.ID)
			return retry.RetryableError(err)
		})
		switch {
		case rerr != nil:
			return o, outcomeUnknown, errors.Join(err, rerr)
		case got.StatusFence != change.Fence:
			// A later grant changed the order since: whether this change
			// landed before it is not known.
			return got, outcomeUnknown, err
		}
	case errors.Is(err, order.ErrStatusChanged):
		dctx, cancel := lock.Detached(lease)
		defer cancel()
		got, rerr := s.orders.Orders.OrderByID(dctx, o.ID)
		if rerr != nil {
			return o, outcomeUnknown, errors.Join(err, rerr)
		}
		return got, outcomeSettled, fmt.Errorf("%w: %w", errMoved, err)
	case errors.Is(err, order.ErrStaleFence):
		// The fence counter went backwards (Redis lost it): raise it past
		// the order's, so the next verification's grant can write.
		if serr := s.locks.SeedFence(lease, s.fenceLockKey(o.ActivityID), o.StatusFence); serr != nil {
			err = errors.Join(err, serr)
		}
		return o, outcomeUnknown, err
	default:
		return o, outcomeUnknown, err
	}
	o.Status, o.StatusFence, o.RefundReason = change.To, change.Fence, change.RefundReason
	if !change.PaidAt.IsZero() {
		o.PaidAt = change.PaidAt.UTC().Truncate(time.Microsecond)
	}
	if change.RefundReason != "" {
		s.log.Warn("payment: order must be refunded", "order_id", o.ID, "activity_id", o.ActivityID, "from", change.From, "reason", change.RefundReason)
	}
	s.log.Info("payment: order status changed", "order_id", o.ID, "activity_id", o.ActivityID, "to", change.To)
	return o, change.To, nil
}

// giveBack returns the expired order's unit to Redis. The receipt keyed by
// the order id makes a retry after a lost reply safe, so a Redis that does
// not answer is asked again; only when it never answers is the unit left to
// reconciliation (the database already counts it as unsold).
func (s *Service) giveBack(lease context.Context, o seckill.Order, epoch int64) {
	err := lock.RetryDetached(lease, func(dctx context.Context) error {
		_, err := s.stock.ReturnOrder(dctx, o.ActivityID, o.ID, o.Units(), epoch)
		if err != nil && !errors.Is(err, stock.ErrOrderReturned) && !errors.Is(err, stock.ErrStale) && !errors.Is(err, stock.ErrNotLoaded) {
			return retry.RetryableError(err)
		}
		return err
	})
	switch {
	case err == nil:
		s.m.returns.WithLabelValues("returned").Inc()
		s.returned(o.ActivityID)
		return
	case errors.Is(err, stock.ErrOrderReturned):
		// A retry after a reply that was lost: the first attempt landed.
		s.m.returns.WithLabelValues("already").Inc()
		s.returned(o.ActivityID)
		return
	case errors.Is(err, stock.ErrStale):
		s.m.returns.WithLabelValues("stale").Inc()
		s.log.Info("payment: unit not returned: the stock was reloaded since the order expired", "order_id", o.ID, "activity_id", o.ActivityID)
		return
	case errors.Is(err, stock.ErrNotLoaded):
		s.m.returns.WithLabelValues("not_loaded").Inc()
		return
	}
	s.m.returns.WithLabelValues("failed").Inc()
	s.log.Error("payment: unit of an expired order could not be returned; reconcile the activity",
		"order_id", o.ID, "activity_id", o.ActivityID, "err", err)
}
