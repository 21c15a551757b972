package purchase

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the purchase path's own numbers; HTTP outcomes, lock and
// breaker metrics belong to their packages.
type metrics struct {
	remaining  *prometheus.GaugeVec
	returned   *prometheus.CounterVec
	leaked     prometheus.Counter
	reconciled prometheus.Counter
	reseeded   prometheus.Counter
	queueDepth *prometheus.GaugeVec
	batchSize  prometheus.Histogram
	batches    *prometheus.CounterVec
	abandoned  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seckill_stock_remaining",
			Help: "Units left in Redis per activity, as last seen by this process.",
		}, []string{"activity_id"}),
		returned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_units_returned_total",
			Help: "Deducted units put back to Redis because their order was not written, by reason.",
		}, []string{"reason"}),
		leaked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_units_leaked_total",
			Help: "Deducted units that could be neither confirmed as sold nor returned; reconciliation recovers them.",
		}),
		reconciled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_reconcile_changes_total",
			Help: "Preloads and reconciliations that changed the stock in Redis.",
		}),
		reseeded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_fence_reseeds_total",
			Help: "Fence counters raised past the database's after it refused a grant as stale (after a Redis failover, or a lease that expired).",
		}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seckill_purchase_queue_depth",
			Help: "Buyers waiting in this process's queue of the activity when its last batch formed.",
		}, []string{"activity_id"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "seckill_purchase_batch_size",
			Help:    "Buyers served by one lock grant.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10), // 1 .. 512
		}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_purchase_batches_total",
			Help: "Batches by how they ended: written, sold_out, lock_busy, unavailable, unreplicated, none_approved, write_failed.",
		}, []string{"outcome"}),
		abandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_purchase_queue_left_total",
			Help: "Buyers who left an activity's queue unserved, by why: queue_full, wait (SECKILL_LOCK_WAIT passed), cancelled.",
		}, []string{"reason"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.remaining, err = register(reg, m.remaining); err != nil {
		return metrics{}, err
	}
	if m.returned, err = register(reg, m.returned); err != nil {
		return metrics{}, err
	}
	if m.leaked, err = register(reg, m.leaked); err != nil {
		return metrics{}, err
	}
	if m.reconciled, err = register(reg, m.reconciled); err != nil {
		return metrics{}, err
	}
	if m.reseeded, err = register(reg, m.reseeded); err != nil {
		return metrics{}, err
	}
	if m.queueDepth, err = register(reg, m.queueDepth); err != nil {
		return metrics{}, err
	}
	if m.batchSize, err = register(reg, m.batchSize); err != nil {
		return metrics{}, err
	}
	if m.batches, err = register(reg, m.batches); err != nil {
		return metrics{}, err
	}
	if m.abandoned, err = register(reg, m.abandoned); err != nil {
		return metrics{}, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// its name, so two services on one registry share their numbers.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("purchase: register metrics: %w", err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
