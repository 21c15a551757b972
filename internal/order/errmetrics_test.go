package order

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// Orders, a duplicate and a missing row count nothing; a call on a closed
// pool counts as a failure; the store keeps working, transactions included.
func TestCountErrors(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		reg := prometheus.NewRegistry()
		if err := s.countErrors(reg); err != nil {
			t.Fatal(err)
		}
		a := newActivity(t, s, 2)
		if err := buy(s, a.ID, 1, 1, ""); err != nil {
			t.Fatal(err)
		}
		if err := buy(s, a.ID, 1, 2, ""); err == nil {
			t.Fatal("a second order of user 1 was written")
		}
		if _, err := s.Orders.OrderByUser(context.Background(), a.ID, 99); err == nil {
			t.Fatal("found an order of user 99")
		}
		if got := testenv.Metric(t, reg, "seckill_db_errors_total", nil); got != 0 {
			t.Fatalf("%v errors counted for answers that are not failures", got)
		}
		if err := s.Ping(context.Background()); err != nil {
			t.Fatalf("Ping through the counting pool: %v", err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: 3, Fence: 3})
		if got := testenv.Metric(t, reg, "seckill_db_errors_total", nil); got != 0 {
			t.Fatalf("%v errors counted for a caller that gave up", got)
		}

		db, _ := s.db.DB()
		_ = db.Close()
		_, _ = s.Activities.Activity(context.Background(), a.ID)
		if got := testenv.Metric(t, reg, "seckill_db_errors_total", nil); got != 1 {
			t.Fatalf("%v errors counted for a read on a closed pool, want 1", got)
		}
	})
}
