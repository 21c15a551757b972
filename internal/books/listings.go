package books

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// ListActivities returns a page of activities by id, after afterID, each with
// its live stock (from Redis, or total - sold from the database when Redis
// has none loaded).
func (s *Service) ListActivities(ctx context.Context, afterID int64, limit int) ([]seckill.ActivityView, error) {
	rows, err := s.orders.Activities.ListActivities(ctx, afterID, limit)
	if err != nil {
		return nil, seckill.DatabaseDown(err)
	}
	now := s.now()
	out := make([]seckill.ActivityView, len(rows))
	for i, r := range rows {
		remaining, err := s.stock.Remaining(ctx, r.ID)
		if err != nil {
			remaining = max(r.TotalStock-r.Sold, 0)
		}
		out[i] = seckill.ActivityView{Activity: r.Activity, Remaining: remaining, Status: r.StatusAt(now, remaining), Room: s.roomView(ctx, r.Activity)}
	}
	return out, nil
}

// ListOrders returns a page of the activity's orders in status ("" for all),
// by id, after afterID.
func (s *Service) ListOrders(ctx context.Context, activityID int64, status, afterID string, limit int) ([]seckill.AdminOrder, error) {
	if _, err := s.catalog.Activity(ctx, activityID); err != nil {
		return nil, err
	}
	os, err := s.orders.Orders.ListOrders(ctx, activityID, status, afterID, limit)
	if err != nil {
		return nil, seckill.DatabaseDown(err)
	}
	return os, nil
}

// MarkRefunded records that an operator (who) refunded the order:
// refund_required becomes refunded, once.
func (s *Service) MarkRefunded(ctx context.Context, orderID, who string) (seckill.AdminOrder, error) {
	o, err := s.orders.Orders.MarkRefunded(ctx, orderID, who, time.Now())
	switch {
	case errors.Is(err, order.ErrNotFound):
		return seckill.AdminOrder{}, seckill.Errorf(seckill.EOrderNotFound, "no order %q", orderID)
	case errors.Is(err, order.ErrNotRefundRequired):
		return o, &seckill.Error{Code: seckill.ERefundNotRequired, Message: "the order is " + o.Status + ", not refund_required", OrderID: o.ID, Err: err}
	case err != nil:
		return seckill.AdminOrder{}, seckill.DatabaseDown(err)
	}
	s.log.InfoContext(ctx, "refund marked done", "order_id", o.ID, "activity_id", o.ActivityID, "by", who)
	return o, nil
}
