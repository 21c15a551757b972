package httpapi

import (
	"strconv"
	"sync"
	"time"

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

	// Every answer's children, resolved once per label set: a vector's
	// WithLabelValues hashes and checks its labels on every call.
	answers  children[answerLabels, prometheus.Counter]
	timings  children[string, prometheus.Observer]
	outcomes children[string, prometheus.Counter]
}

// answerLabels are seckill_http_requests_total's labels of one answer.
type answerLabels struct {
	route, method string
	status        int
}

func newMetrics(r *promreg.Registrar) *metrics {
	m := &metrics{
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
	m.answers.resolve = func(l answerLabels) prometheus.Counter {
		return m.requests.WithLabelValues(l.route, l.method, strconv.Itoa(l.status))
	}
	m.timings.resolve = func(route string) prometheus.Observer { return m.duration.WithLabelValues(route) }
	m.outcomes.resolve = func(outcome string) prometheus.Counter { return m.purchases.WithLabelValues(outcome) }
	return m
}

// answered counts one answer and its time.
func (m *metrics) answered(route, method string, status int, elapsed time.Duration) {
	m.answers.get(answerLabels{route, method, status}).Inc()
	m.timings.get(route).Observe(elapsed.Seconds())
}

// purchased counts one purchase answer by its outcome.
func (m *metrics) purchased(outcome string) { m.outcomes.get(outcome).Inc() }

// children are a vector's children by their labels, each resolved once.
// The labels come from fixed sets, so the map stays small.
type children[K comparable, C any] struct {
	mu      sync.RWMutex
	byLabel map[K]C
	resolve func(K) C
}

func (c *children[K, C]) get(k K) C {
	c.mu.RLock()
	child, ok := c.byLabel[k]
	c.mu.RUnlock()
	if ok {
		return child
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if child, ok := c.byLabel[k]; ok {
		return child
	}
	if c.byLabel == nil {
		c.byLabel = map[K]C{}
	}
	child = c.resolve(k)
	c.byLabel[k] = child
	return child
}

// methodLabel bounds the method label to the methods HTTP defines.
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
		return m
	}
	return "other"
}
