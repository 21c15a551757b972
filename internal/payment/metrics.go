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

// metrics are the payment flow's numbers. Every method works on a zero
// registry (nil: not registered, still counted).
type metrics struct {
	verifications *prometheus.CounterVec
	expirations   prometheus.Counter
	refunds       prometheus.Counter
	returns       *prometheus.CounterVec
	provider      *prometheus.CounterVec
	lag           prometheus.Gauge
	reg           prometheus.Registerer
	log           *slog.Logger
}

// newMetrics is long because it is a flat list of collectors, each given
// its series at 0, then registered.
func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	m := &metrics{
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_payment_verifications_total",
			Help: "Payment verifications by trigger (callback, result_page, delay_queue) and outcome.",
		}, []string{"trigger", "outcome"}),
		expirations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_orders_expired_total",
			Help: "Orders expired unpaid by this process (each gave its unit back).",
		}),
		refunds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_refunds_required_total",
			Help: "Orders found paid late, or paid with an amount, currency or merchant that does not match, by this process: the buyer must be refunded.",
		}),
		returns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_payment_unit_returns_total",
			Help: "Returns of expired orders' units to Redis, by result (returned, already, stale, not_loaded, failed).",
		}, []string{"result"}),
		provider: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_payment_provider_requests_total",
			Help: "Payment provider queries by result: paid, pending, failed, none (404), unknown, open (breaker answered).",
		}, []string{"result"}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "seckill_payment_queue_lag_seconds",
			Help: "Now minus the oldest pay_by among created orders that are due, as last seen by this process's delay queue (0: none due).",
		}),
		reg: reg,
		log: log,
	}
	// Every series exists from start-up, at 0: a rate or an increase over a
	// series that appears with its first event misses that event.
	for _, r := range []string{"paid", "pending", "failed", "none", "unknown", "open"} {
		m.provider.WithLabelValues(r)
	}
	for _, r := range []string{"returned", "already", "stale", "not_loaded", "failed"} {
		m.returns.WithLabelValues(r)
	}
	for _, t := range []string{triggerCallback, triggerResultPage, triggerDelayQueue, triggerCancel} {
		for _, o := range []string{outcomePaid, outcomeExpired, outcomeRefundRequired, outcomeUnchanged, outcomeSettled, outcomeUnknown, outcomeBusy, outcomeCoalesced} {
			m.verifications.WithLabelValues(t, o)
		}
	}
	if m.reg != nil {
		r := promreg.NewRegistrar(m.reg)
		promreg.Add(r, &m.verifications)
		promreg.Add(r, &m.expirations)
		promreg.Add(r, &m.refunds)
		promreg.Add(r, &m.returns)
		promreg.Add(r, &m.provider)
		promreg.Add(r, &m.lag)
		m.failed(r.Err())
	}
	return m
}

// failed logs metrics that could not be registered: they are not worth
// refusing to verify payments over.
func (m *metrics) failed(err error) {
	if err != nil {
		m.log.Error("payment: metrics not registered", "err", err)
	}
}

// register registers c, a collector that reads its values at scrape time.
func (m *metrics) register(c prometheus.Collector) {
	if m.reg == nil {
		return
	}
	_, err := promreg.Register(m.reg, c)
	m.failed(err)
}

func (m *metrics) breakerState(state func() float64) {
	m.register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "seckill_payment_breaker_state",
		Help: "State of the payment provider's circuit breaker: 0 closed, 1 half-open, 2 open.",
	}, state))
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
// store's snapshot (order.Store.StatusCounts): a scrape counts the orders
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
