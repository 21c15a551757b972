package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// metrics are the HTTP edge's numbers. Every label takes values from a fixed
// set (route templates, known methods, status codes, contract codes), so no
// client can grow them.
type metrics struct {
	requests    *prometheus.CounterVec   // route, method, status
	duration    *prometheus.HistogramVec // route
	purchases   *prometheus.CounterVec   // outcome
	rateLimited *prometheus.CounterVec   // scope
}

func newMetrics(r *promreg.Registrar) *metrics {
	return &metrics{
		requests: r.CounterVec("seckill_http_requests_total",
			"HTTP requests answered, by route template, method and status.", "route", "method", "status"),
		// A purchase is a few Redis and one database round trip: 1-100 ms.
		duration: r.HistogramVec("seckill_http_request_duration_seconds", "Time to answer an HTTP request, by route template.",
			[]float64{.001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2.5}, "route"),
		purchases: r.CounterVec("seckill_purchases_total",
			`Purchase requests answered, by outcome: "created" or the error code.`, "outcome"),
		rateLimited: r.CounterVec("seckill_http_rate_limited_total",
			`Requests refused by a rate limit, by scope: "user" or "global".`, "scope"),
	}
}

// methodLabel bounds the method label to the methods HTTP defines.
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
		return m
	}
	return "other"
}
