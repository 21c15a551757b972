package order

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill-oss/seckill"
)

// Why createOrder did not write its order.
var (
	errDuplicate = errors.New("the user already holds an order for this activity")
	errKeyUsed   = errors.New("the idempotency key already belongs to another order")
	errSoldOut   = errors.New("sold out")
)

// createOrder writes o as a batch of one under o.Fence (CreateOrders) and
// returns it as stored. An order the batch did not write is errSoldOut
// (Over), or, kept out by a unique key, errDuplicate when the user holds an
// order of the activity and errKeyUsed otherwise.
func createOrder(ctx context.Context, s *Orders, o seckill.Order) (seckill.Order, error) {
	b, err := s.CreateOrders(ctx, o.ActivityID, o.Fence, []seckill.Order{o})
	switch {
	case err != nil:
		return seckill.Order{}, err
	case len(b.Written) == 1:
		return b.Written[0], nil
	case len(b.Over) == 1:
		return seckill.Order{}, fmt.Errorf("order for user %d in activity %d: %w", o.UserID, o.ActivityID, errSoldOut)
	}
	which := errKeyUsed
	if _, err := s.OrderByUser(ctx, o.ActivityID, o.UserID); err == nil || o.IdempotencyKey == "" {
		which = errDuplicate
	}
	return seckill.Order{}, fmt.Errorf("order for user %d in activity %d: %w", o.UserID, o.ActivityID, which)
}
