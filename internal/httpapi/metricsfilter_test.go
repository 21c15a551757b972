package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsHideActivitiesBuyersCannotSee: /metrics has no series of an
// activity buyers get 404 for (unannounced, before its start), on either
// listener; other activities' series and series without an activity stay.
// Can fail: serving the registry unfiltered shows activity_id="7".
func TestMetricsHideActivitiesBuyersCannotSee(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seckill_stock_remaining", Help: "h"}, []string{"activity_id"})
	hiddenOnly := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seckill_hidden_only", Help: "h"}, []string{"activity_id"})
	reg.MustRegister(g, hiddenOnly)
	g.WithLabelValues("1").Set(100)
	g.WithLabelValues("7").Set(777) // the fake's BuyerActivity: 404
	hiddenOnly.WithLabelValues("7").Set(1)
	_, ops := NewServers(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake(), Registry: reg, Gatherer: reg}))
	public := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake(), Registry: prometheus.NewRegistry(), Gatherer: reg}))
	for name, h := range map[string]http.Handler{"public": public, "ops": ops} {
		rec := serve(h, request{"GET", "/metrics", "", []string{"Authorization", "Bearer " + adminToken}})
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `seckill_stock_remaining{activity_id="1"} 100`) {
			t.Fatalf("%s: %d, want the announced activity's series:\n%s", name, rec.Code, body)
		}
		if strings.Contains(body, `activity_id="7"`) || strings.Contains(body, "seckill_hidden_only") {
			t.Errorf("%s: the hidden activity's series are shown:\n%s", name, body)
		}
	}
}
