package usercheck

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// Values of the result label.
const (
	resultEligible    = "eligible"
	resultRejected    = "rejected"
	resultUnavailable = "unavailable" // the service failed or missed the deadline
	resultOpen        = "open"        // the breaker answered; no call was made
	resultCanceled    = "canceled"    // the caller gave up
)

func resultOf(v verdict, err error) string {
	switch {
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return resultOpen
	case errors.Is(err, context.Canceled):
		return resultCanceled
	case err != nil:
		return resultUnavailable
	case !v.eligible:
		return resultRejected
	default:
		return resultEligible
	}
}

// metrics is nil when no registry was configured; its methods then do nothing.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, state func() gobreaker.State, logger *slog.Logger) *metrics {
	if reg == nil {
		return nil
	}
	r := promreg.NewRegistrar(reg, logger)
	m := &metrics{
		requests: r.CounterVec("seckill_usercheck_requests_total",
			"User verifications by result: eligible, rejected, unavailable, open (breaker answered), canceled (caller gave up).", "result"),
		duration: r.HistogramVec("seckill_usercheck_request_duration_seconds",
			"Duration of user-verification calls that reached the network, by result.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "result"),
	}
	// The gauge asks the breaker at scrape time, which also moves an open
	// breaker whose timeout has passed to half-open.
	r.GaugeFunc("seckill_usercheck_breaker_state",
		"State of the user-verification circuit breaker: 0 closed, 1 half-open, 2 open.",
		func() float64 { return float64(state()) })
	promreg.Zero(m.requests.MetricVec, resultEligible, resultRejected, resultUnavailable, resultOpen, resultCanceled)
	promreg.Zero(m.duration.MetricVec, resultEligible, resultRejected, resultUnavailable, resultCanceled)
	return m
}

func (m *metrics) count(result string) {
	if m != nil {
		m.requests.WithLabelValues(result).Inc()
	}
}

func (m *metrics) observe(result string, d time.Duration) {
	if m != nil {
		m.duration.WithLabelValues(result).Observe(d.Seconds())
	}
}
