package payment

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/promreg"
)

// Outcomes of one verification, the values of the outcome label.
const (
	outcomePaid           = "paid"            // created -> paid
	outcomeExpired        = "expired"         // created -> expired, unit given back
	outcomeRefundRequired = "refund_required" // expired -> refund_required, or created -> refund_required (a payment that does not match; unit given back)
	outcomeUnchanged      = "unchanged"       // the provider's answer changes nothing (pending before pay_by)
	outcomeSettled        = "settled"         // the status was already final, or another trigger changed it first
	outcomeUnknown        = "unknown"         // no answer from the provider, or the write failed: verified again later
	outcomeBusy           = "busy"            // another trigger holds the order's lock
	// A callback answered without asking the provider: a query that started
	// after it arrived answered it, or the order expired long ago.
	outcomeCoalesced = "coalesced"
)

// metrics are the payment flow's numbers. Every method works on a nil
// registry (not registered, still counted).
type metrics struct {
	verifications *prometheus.CounterVec
	expirations   prometheus.Counter
	refunds       prometheus.Counter
	returns       *prometheus.CounterVec
	provider      *prometheus.CounterVec
	lag           prometheus.Gauge
	r             *promreg.Registrar
}

// newMetrics makes the collectors, each given its series at 0.
func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	r := promreg.NewRegistrar(reg, log)
	m := &metrics{
		verifications: r.CounterVec("seckill_payment_verifications_total",
			"Payment verifications by trigger (callback, result_page, delay_queue) and outcome.", "trigger", "outcome"),
		expirations: r.Counter("seckill_orders_expired_total",
			"Orders expired unpaid by this process (each gave its unit back)."),
		refunds: r.Counter("seckill_refunds_required_total",
			"Orders found paid late, or paid with an amount, currency or merchant that does not match, by this process: the buyer must be refunded."),
		returns: r.CounterVec("seckill_payment_unit_returns_total",
			"Returns of expired orders' units to Redis, by result (returned, already, stale, not_loaded, failed).", "result"),
		provider: r.CounterVec("seckill_payment_provider_requests_total",
			"Payment provider queries by result: paid, pending, failed, none (404), unknown, open (breaker answered).", "result"),
		lag: r.Gauge("seckill_payment_queue_lag_seconds",
			"Now minus the oldest pay_by among created orders that are due, as last seen by this process's delay queue (0: none due)."),
		r: r,
	}
	promreg.Zero(m.provider.MetricVec, "paid", "pending", "failed", "none", "unknown", "open")
	promreg.Zero(m.returns.MetricVec, "returned", "already", "stale", "not_loaded", "failed")
	for _, t := range []string{triggerCallback, triggerResultPage, triggerDelayQueue, triggerCancel} {
		for _, o := range []string{outcomePaid, outcomeExpired, outcomeRefundRequired, outcomeUnchanged, outcomeSettled, outcomeUnknown, outcomeBusy, outcomeCoalesced} {
			m.verifications.WithLabelValues(t, o)
		}
	}
	return m
}

func (m *metrics) breakerState(state func() float64) {
	m.r.GaugeFunc("seckill_payment_breaker_state",
		"State of the payment provider's circuit breaker: 0 closed, 1 half-open, 2 open.", state)
}

func (m *metrics) providerCall(result string) { m.provider.WithLabelValues(result).Inc() }

func (m *metrics) verified(trigger, outcome string) {
	m.verifications.WithLabelValues(trigger, outcome).Inc()
	switch outcome {
	case outcomeExpired:
		m.expirations.Inc()
	case outcomeRefundRequired:
		m.refunds.Inc()
	}
}

// ordersByStatus is the gauge seckill_orders{status}, read from the order
// store's snapshot (order.Orders.StatusCounts): a scrape counts the orders
// table only when the last count is older than
// order.DefaultStatusCountMaxAge, and concurrent scrapes share one count.
type ordersByStatus struct {
	count func(ctx context.Context) (map[string]int64, error)
	desc  *prometheus.Desc
	log   *slog.Logger
}

// scrapeTimeout bounds the count a scrape runs.
const scrapeTimeout = 2 * time.Second

func newOrdersByStatus(count func(ctx context.Context) (map[string]int64, error), log *slog.Logger) *ordersByStatus {
	return &ordersByStatus{
		count: count,
		desc: prometheus.NewDesc("seckill_orders",
			fmt.Sprintf("Orders in the database by status, as counted up to %v ago.", order.DefaultStatusCountMaxAge),
			[]string{"status"}, nil),
		log: log,
	}
}

func (o *ordersByStatus) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

func (o *ordersByStatus) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := o.count(ctx)
	if err != nil {
		o.log.Warn("payment: orders by status not counted", "err", err)
		ch <- prometheus.NewInvalidMetric(o.desc, fmt.Errorf("count orders: %w", err))
		return
	}
	for _, s := range []string{seckill.OrderStatusCreated, seckill.OrderStatusPaid, seckill.OrderStatusExpired, seckill.OrderStatusRefundRequired, seckill.OrderStatusRefunded} {
		ch <- prometheus.MustNewConstMetric(o.desc, prometheus.GaugeValue, float64(counts[s]), s)
	}
}
