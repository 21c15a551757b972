package payment_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// seckill_orders is served from the order store's snapshot, so scrapes do
// not each count the orders table; the audit's counts stay exact.
func TestOrdersMetricIsASnapshotAuditIsExact(t *testing.T) {
	w := newWorld(t, time.Hour, 10)
	in := w.instance(instanceOptions{})
	ctx := context.Background()
	o := w.buy(1)
	expired := map[string]string{"status": seckill.OrderStatusExpired}
	created := map[string]string{"status": seckill.OrderStatusCreated}
	if n := in.counter(t, "seckill_orders", created); n != 1 {
		t.Fatalf("seckill_orders{created} = %v, want 1", n)
	}

	if err := w.orders.Orders.ChangeStatus(ctx, order.StatusChange{OrderID: o.ID, ActivityID: o.ActivityID,
		From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 50}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := in.svc.Counts(ctx, w.activity.ID); err != nil || n != 1 {
		t.Errorf("audit counts %d expired, %v; want the exact 1", n, err)
	}
	if c, e := in.counter(t, "seckill_orders", created), in.counter(t, "seckill_orders", expired); c != 1 || e != 0 {
		t.Errorf("seckill_orders within %v of the last count: created %v, expired %v; want the snapshot's 1 and 0",
			order.DefaultStatusCountMaxAge, c, e)
	}

	families, err := in.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "seckill_orders" && !strings.Contains(f.GetHelp(), "10s") {
			t.Errorf("seckill_orders HELP %q does not say the count may be 10s old", f.GetHelp())
		}
	}
}
