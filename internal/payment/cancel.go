package payment

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
)

// triggerCancel labels a buyer's cancellation in the verification metrics.
const triggerCancel = "cancel"

// Cancel is the buyer giving up their unpaid order: under the order's lock,
// as a verification runs, the provider is asked first (a payment that landed
// makes the order paid, and it is not cancelled); otherwise the order expires
// now, through the expiry's own path (expire): created -> expired and the
// activity's sold count down in one transaction, then the unit back to Redis
// exactly once. Errors: EOrderNotFound, seckill.ENotCancellable (with the order's
// status in the message), EUnavailable (provider, lock or store).
func (s *Service) Cancel(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	o, err := s.orders.Orders.HeldOrder(ctx, activityID, userID)
	if err != nil {
		return seckill.Order{}, err
	}
	if o.Status != seckill.OrderStatusCreated {
		return o, notCancellable(o)
	}
	lk, err := s.locks.Obtain(ctx, s.lockKey(o), s.cfg.LockTTL, &lock.ObtainOptions{
		Wait:      s.cfg.LockTTL,
		AutoRenew: true,
		FenceOf:   s.fenceLockKey(o.ActivityID),
	})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		s.m.verified(triggerCancel, outcomeBusy)
		return o, seckill.Unavailable("the order is being verified; try again", err)
	case err != nil:
		s.m.verified(triggerCancel, outcomeUnknown)
		return o, seckill.RedisDown(err)
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "payment: order lock release", "order_id", o.ID, "fence", lk.Fence(), "err", err)
		}
	}()
	v, outcome, err := s.cancelHolding(lk, o.ID)
	s.m.verified(triggerCancel, outcome)
	switch {
	case err != nil:
		return v, seckill.Unavailable("the order could not be cancelled now; nothing changed", err)
	case v.Status != seckill.OrderStatusExpired:
		return v, notCancellable(v)
	}
	s.log.InfoContext(ctx, "payment: order cancelled by its buyer", "order_id", v.ID, "activity_id", v.ActivityID)
	return v, nil
}

// cancelHolding is Cancel's part under the order's lock.
func (s *Service) cancelHolding(lk *lock.Lock, orderID string) (seckill.Order, string, error) {
	lease := lk.Context()
	o, err := s.orders.Orders.OrderByID(lease, orderID)
	if err != nil {
		return seckill.Order{}, outcomeUnknown, fmt.Errorf("payment: read order %s: %w", orderID, err)
	}
	if o.Status != seckill.OrderStatusCreated {
		return o, outcomeSettled, nil
	}
	budget := lk.CallBudget(s.cfg.ProviderTimeout)
	if budget <= 0 {
		return o, outcomeUnknown, fmt.Errorf("payment: cancel order %s: the lease ran out before the provider could be asked: %w", o.ID, context.DeadlineExceeded)
	}
	pctx, cancel := context.WithTimeout(lease, budget)
	p, err := s.provider.Check(pctx, o.ID)
	cancel()
	if err != nil {
		// Not knowing whether the buyer paid, the order is not given up.
		return o, outcomeUnknown, err
	}
	change := order.StatusChange{OrderID: o.ID, ActivityID: o.ActivityID, From: o.Status, Fence: lk.Fence()}
	if p.Status == PaymentPaid {
		change.PaidAt = p.PaidAt
		change.To, change.RefundReason = settle(o, p, proofOf(s.cfg))
		if change.To == seckill.OrderStatusPaid {
			return s.write(lease, o, change)
		}
		return s.expire(lease, o, change) // a payment that does not match: refunded, the unit back
	}
	change.To = seckill.OrderStatusExpired
	return s.expire(lease, o, change)
}

func notCancellable(o seckill.Order) *seckill.Error {
	return &seckill.Error{Code: seckill.ENotCancellable, Message: fmt.Sprintf("the order is %s; only an unpaid (created) order can be cancelled", o.Status), OrderID: o.ID}
}
