package purchase

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// metrics are the purchase path's own numbers; HTTP outcomes, lock and
// breaker metrics belong to their packages.
type metrics struct {
	remaining  *prometheus.GaugeVec
	returned   *prometheus.CounterVec
	leaked     prometheus.Counter
	reseeded   prometheus.Counter
	queueDepth *prometheus.GaugeVec
	queued     prometheus.Gauge
	batchSize  prometheus.Histogram
	groupSize  prometheus.Histogram
	groupTime  prometheus.Histogram
	batchStep  *prometheus.HistogramVec
	steps      [stepCount]prometheus.Observer // batchStep's children, resolved once
	batches    *prometheus.CounterVec
	abandoned  *prometheus.CounterVec
}

// newMetrics defines the package's collectors and registers them with reg.
// It is long because it is a flat list, one collector after another, with no
// branch worth a function of its own.
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
		reseeded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_fence_reseeds_total",
			Help: "Fence counters raised past the database's after it refused a grant as stale (after a Redis failover, or a lease that expired).",
		}),
	}
	m.addBatchMetrics()
	r := promreg.NewRegistrar(reg)
	promreg.Add(r, &m.remaining)
	promreg.Add(r, &m.returned)
	promreg.Add(r, &m.leaked)
	promreg.Add(r, &m.reseeded)
	promreg.Add(r, &m.queueDepth)
	promreg.Add(r, &m.queued)
	promreg.Add(r, &m.batchSize)
	promreg.Add(r, &m.groupSize)
	promreg.Add(r, &m.groupTime)
	promreg.Add(r, &m.batchStep)
	promreg.Add(r, &m.batches)
	promreg.Add(r, &m.abandoned)
	if err := r.Err(); err != nil {
		return metrics{}, fmt.Errorf("purchase: %w", err)
	}
	m.resolveSteps()
	return m, nil
}

// addBatchMetrics makes the metrics of the queues and batches.
func (m *metrics) addBatchMetrics() {
	m.queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "seckill_purchase_queue_depth",
		Help: "Buyers waiting in this process's queue of the activity when its last batch formed.",
	}, []string{"activity_id"})
	m.queued = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "seckill_purchase_queued_buyers",
		Help: "Buyers waiting in all of this process's purchase queues (at most SECKILL_QUEUE_MAX_TOTAL).",
	})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "seckill_purchase_batch_size",
		Help:    "Buyers served by one lock grant.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10), // 1 .. 512
	})
	m.groupSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "seckill_purchase_write_group_activities",
		Help:    "Activities whose batches one shared order transaction wrote (group commit across activities).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1 .. 256
	})
	m.groupTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "seckill_purchase_write_group_seconds",
		Help:    "How long one shared order transaction took, from BEGIN to COMMIT; a batch's write step adds the wait for its group to start.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
	})
	m.batchStep = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "seckill_purchase_batch_step_seconds",
		Help: "Where a batch's wall time goes, step by step: grant (lock obtain, with its wait), verify (user checks), deduct (Redis), write (the orders' transaction), release.",
		// 100 µs .. 0.8 s: a step is a round trip or a few.
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14),
	}, []string{"step"})
	m.batches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_purchase_batches_total",
		Help: "Batches by how they ended: written, sold_out, lock_busy, unavailable, unreplicated, none_approved, write_failed.",
	}, []string{"outcome"})
	m.abandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_purchase_queue_left_total",
		Help: "Buyers who left an activity's queue unserved, by why: queue_full (SECKILL_QUEUE_MAX), instance_full (SECKILL_QUEUE_MAX_TOTAL), wait (SECKILL_LOCK_WAIT passed), cancelled.",
	}, []string{"reason"})
}

// step is a step of a batch (seckill_purchase_batch_step_seconds).
type step int

const (
	stepGrant step = iota
	stepVerify
	stepDeduct
	stepWrite
	stepRelease
	stepCount
)

var stepNames = [stepCount]string{"grant", "verify", "deduct", "write", "release"}

// resolveSteps looks up each step's histogram once, after registration (which
// may hand back an already registered vector), so a batch's timing costs no
// label lookup; every step is exported from start-up.
func (m *metrics) resolveSteps() {
	for st, name := range stepNames {
		m.steps[st] = m.batchStep.WithLabelValues(name)
	}
}

// timeStep observes the time since start as the batch's step.
func (m metrics) timeStep(st step, start time.Time) {
	m.steps[st].Observe(time.Since(start).Seconds())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
