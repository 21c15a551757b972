package httpapi

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFake()
	h := NewServer(Config{}, withParts(Deps{Service: f, Registry: reg, Gatherer: reg}))
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")})
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", nil})
	f.buy = func(seckill.BuyRequest) (seckill.Order, error) {
		return seckill.Order{}, seckill.Errorf(seckill.ESoldOut, "gone")
	}
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")})
	serve(h, request{"FROB", "/x" + strings.Repeat("y", 100), "", nil})

	rec := serve(h, request{"GET", "/metrics", "", nil})
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	for _, want := range []string{
		`seckill_purchases_total{outcome="created"} 1`,
		`seckill_purchases_total{outcome="sold_out"} 1`,
		`seckill_purchases_total{outcome="unauthenticated"} 1`,
		`seckill_http_requests_total{method="POST",route="/api/v1/activities/:id/orders",status="201"} 1`,
		`seckill_http_requests_total{method="other",route="unmatched",status="404"} 1`,
		`seckill_http_request_duration_seconds_bucket{route="/api/v1/activities/:id/orders",le="0.001"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A second server on the same registry shares the counters instead of failing.
	h2 := NewServer(Config{}, withParts(Deps{Service: newFake(), Registry: reg, Gatherer: reg}))
	serve(h2, request{"POST", "/api/v1/activities/1/orders", "", user("7")})
	if !strings.Contains(serve(h, request{"GET", "/metrics", "", nil}).Body.String(), `seckill_purchases_total{outcome="created"} 2`) {
		t.Error("second server's purchase not counted in the shared counter")
	}
}
