package lock

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// Observer receives what the lock does, for metrics. Results are short,
// fixed strings (safe as label values); keys are not passed because they are
// unbounded. Methods must be safe for concurrent use and must not block.
type Observer interface {
	// Obtained reports how an Obtain call ended and how long it took:
	// "obtained", "not_obtained", "unknown" (ErrUnknownOutcome) or "error".
	Obtained(result string, took time.Duration)
	// UnknownOutcome reports an acquire attempt that failed with a timeout or
	// connection error, and what the follow-up lookup found: "held" (it had
	// succeeded), "not_held", or "unknown" (a background cleanup was started).
	UnknownOutcome(found string)
	// Released reports a Release and how long the lock was held: "released"
	// (also when a resend found its first attempt had deleted the lock),
	// "expired" (absent), "other_owner", or "error".
	Released(result string, held time.Duration)
	// LeaseLost reports an Extend or auto-renewal that found the lock gone.
	LeaseLost()
	// CleanedUp reports how a background compare-and-delete ended:
	// "released" (it deleted the lock), "expired" (it never found the lock
	// its own), "other_owner", or "abandoned" (Close came first). One that
	// watches for a late acquire reports when its watch ends, a TTL later.
	CleanedUp(result string)
}

type noObserver struct{}

func (noObserver) Obtained(string, time.Duration) {}
func (noObserver) UnknownOutcome(string)          {}
func (noObserver) Released(string, time.Duration) {}
func (noObserver) LeaseLost()                     {}
func (noObserver) CleanedUp(string)               {}

// Metrics is an Observer that keeps Prometheus collectors, all named
// seckill_lock_*.
type Metrics struct {
	obtains   *prometheus.CounterVec
	obtainDur *prometheus.HistogramVec
	unknown   *prometheus.CounterVec
	releases  *prometheus.CounterVec
	hold      prometheus.Histogram
	lost      prometheus.Counter
	cleanups  *prometheus.CounterVec
}

// NewMetrics returns Metrics registered with reg (nil: not registered). When
// reg already holds collectors of the same names, as when two Clients share a
// registry, those are reused. A collector that cannot be registered is
// logged to log (nil: slog.Default()).
func NewMetrics(reg prometheus.Registerer, log *slog.Logger) *Metrics {
	r := promreg.NewRegistrar(reg, log)
	return &Metrics{
		obtains: r.CounterVec("seckill_lock_obtain_total", "Obtain calls by result.", "result"),
		obtainDur: r.HistogramVec("seckill_lock_obtain_seconds", "Duration of Obtain calls by result.",
			prometheus.ExponentialBuckets(0.0001, 3, 10), "result"),
		unknown: r.CounterVec("seckill_lock_unknown_outcomes_total",
			"Acquire attempts that timed out, by what the lookup found.", "found"),
		releases: r.CounterVec("seckill_lock_release_total", "Release calls by result.", "result"),
		hold: r.Histogram("seckill_lock_hold_seconds", "Time from grant to release.",
			prometheus.ExponentialBuckets(0.0005, 3, 10)),
		lost:     r.Counter("seckill_lock_lost_leases_total", "Extends or renewals that found the lock gone."),
		cleanups: r.CounterVec("seckill_lock_cleanups_total", "Background compare-and-deletes by result.", "result"),
	}
}

// Obtained implements Observer.
func (m *Metrics) Obtained(result string, took time.Duration) {
	m.obtains.WithLabelValues(result).Inc()
	m.obtainDur.WithLabelValues(result).Observe(took.Seconds())
}

// UnknownOutcome implements Observer.
func (m *Metrics) UnknownOutcome(found string) { m.unknown.WithLabelValues(found).Inc() }

// Released implements Observer.
func (m *Metrics) Released(result string, held time.Duration) {
	m.releases.WithLabelValues(result).Inc()
	m.hold.Observe(held.Seconds())
}

// LeaseLost implements Observer.
func (m *Metrics) LeaseLost() { m.lost.Inc() }

// CleanedUp implements Observer.
func (m *Metrics) CleanedUp(result string) { m.cleanups.WithLabelValues(result).Inc() }
