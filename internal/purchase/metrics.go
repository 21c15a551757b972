package purchase

import (
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

// newMetrics makes the package's collectors, registered through r.
func newMetrics(r *promreg.Registrar) metrics {
	m := metrics{
		remaining: r.GaugeVec("seckill_stock_remaining",
			"Units left in Redis per activity, as last seen by this process.", "activity_id"),
		returned: r.CounterVec("seckill_units_returned_total",
			"Deducted units put back to Redis because their order was not written, by reason.", "reason"),
		leaked: r.Counter("seckill_units_leaked_total",
			"Deducted units that could be neither confirmed as sold nor returned; reconciliation recovers them."),
		reseeded: r.Counter("seckill_fence_reseeds_total",
			"Fence counters raised past the database's after it refused a grant as stale (after a Redis failover, or a lease that expired)."),
	}
	m.addBatchMetrics(r)
	m.resolveSteps()
	return m
}

// addBatchMetrics makes the metrics of the queues and batches.
func (m *metrics) addBatchMetrics(r *promreg.Registrar) {
	m.queueDepth = r.GaugeVec("seckill_purchase_queue_depth",
		"Buyers waiting in this process's queue of the activity when its last batch formed.", "activity_id")
	m.queued = r.Gauge("seckill_purchase_queued_buyers",
		"Buyers waiting in all of this process's purchase queues (at most SECKILL_QUEUE_MAX_TOTAL).")
	m.batchSize = r.Histogram("seckill_purchase_batch_size", "Buyers served by one lock grant.",
		prometheus.ExponentialBuckets(1, 2, 10)) // 1 .. 512
	m.groupSize = r.Histogram("seckill_purchase_write_group_activities",
		"Activities whose batches one shared order transaction wrote (group commit across activities).",
		prometheus.ExponentialBuckets(1, 2, 9)) // 1 .. 256
	m.groupTime = r.Histogram("seckill_purchase_write_group_seconds",
		"How long one shared order transaction took, from BEGIN to COMMIT; a batch's write step adds the wait for its group to start.",
		prometheus.ExponentialBuckets(0.0001, 2, 14))
	// 100 µs .. 0.8 s: a step is a round trip or a few.
	m.batchStep = r.HistogramVec("seckill_purchase_batch_step_seconds",
		"Where a batch's wall time goes, step by step: grant (lock obtain, with its wait), verify (user checks), deduct (Redis), write (the orders' transaction), release.",
		prometheus.ExponentialBuckets(0.0001, 2, 14), "step")
	m.batches = r.CounterVec("seckill_purchase_batches_total",
		"Batches by how they ended: written, sold_out, lock_busy, unavailable, unreplicated, none_approved, write_failed.", "outcome")
	m.abandoned = r.CounterVec("seckill_purchase_queue_left_total",
		"Buyers who left an activity's queue unserved, by why: queue_full (SECKILL_QUEUE_MAX), instance_full (SECKILL_QUEUE_MAX_TOTAL), wait (SECKILL_LOCK_WAIT passed), cancelled.",
		"reason")
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
