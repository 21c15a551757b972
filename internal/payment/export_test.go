package payment

import (
	"context"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
)

// WrapChangeStatus makes the service write status changes through f, which
// is handed the store's own ChangeStatus.
func (s *Service) WrapChangeStatus(f func(ctx context.Context, c order.StatusChange, next func(context.Context, order.StatusChange) error) error) {
	next := s.changeStatus
	s.changeStatus = func(ctx context.Context, c order.StatusChange) error { return f(ctx, c, next) }
}

// SetQueriesTTL sets how long an order's query counts live, and returns
// what undoes it.
func SetQueriesTTL(d time.Duration) (undo func()) {
	old := queriesTTL
	queriesTTL = d
	return func() { queriesTTL = old }
}
