package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// An audit's verdict and purchases refused for unloaded stock reach
// /metrics, where the alerts look for them.
func TestBookMetrics(t *testing.T) {
	f := newFake()
	// Activity 3 is one buyers may see: its series are shown.
	f.activity = func(id int64) (seckill.ActivityView, error) {
		return seckill.ActivityView{Activity: seckill.Activity{ID: id, TotalStock: 100, StartsAt: t0, EndsAt: t1}}, nil
	}
	f.audit = func(id int64) (seckill.Audit, error) {
		return seckill.Audit{ActivityID: id, TotalStock: 100, Orders: 101, Oversold: true}, nil
	}
	f.buy = func(r seckill.BuyRequest) (seckill.Order, error) {
		return seckill.Order{}, &seckill.Error{Code: seckill.EUnavailable, Message: "not loaded",
			Err: fmt.Errorf("deduct: %w", stock.ErrNotLoaded)}
	}
	reg := prometheus.NewRegistry()
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: f, Registry: reg}))
	checkError(t, serve(h, request{"POST", "/api/v1/activities/3/orders", "", user("42")}), 503, seckill.EUnavailable)
	serve(h, request{"GET", "/admin/v1/activities/3/audit", "", admin})

	body := serve(h, request{"GET", "/metrics", "", nil}).Body.String()
	for _, want := range []string{
		`seckill_audit_oversold{activity_id="3"} 1`,
		`seckill_audit_consistent{activity_id="3"} 0`,
		`seckill_stock_not_loaded_total{activity_id="3"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
