// Package promreg makes and registers Prometheus collectors the one way
// every package of the service does it: two instances on one registry (two
// servers in a test, a sibling client) share one collector instead of
// failing, and a collector that cannot be registered is logged and counts
// unregistered. Metrics never stop the service: a clash of names is a
// mistake its tests see in the log, not a reason to refuse buyers.
package promreg

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the collector of
// the same type already registered under its name. Any other failure is
// returned with c, which then counts unregistered.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("register metrics: %w", err)
}

// Registrar makes a package's collectors and registers each as it is made
// (or shares the one already registered under its name, as Register does).
// A nil registry registers nothing: the collectors count unregistered.
type Registrar struct {
	reg prometheus.Registerer
	log *slog.Logger
}

// NewRegistrar returns a Registrar on reg (nil: register nothing) that logs
// a failure to log (nil: slog.Default()).
func NewRegistrar(reg prometheus.Registerer, log *slog.Logger) *Registrar {
	if log == nil {
		log = slog.Default()
	}
	return &Registrar{reg: reg, log: log}
}

// add registers c and returns the collector registered under its name.
func add[C prometheus.Collector](r *Registrar, c C) C {
	if r.reg == nil {
		return c
	}
	got, err := Register(r.reg, c)
	if err != nil {
		r.log.Error("metrics: collector not registered; it counts unregistered", "err", err)
	}
	return got
}

// Collector registers c, a collector of the caller's own making.
func (r *Registrar) Collector(c prometheus.Collector) { add(r, c) }

// Counter makes and registers a counter.
func (r *Registrar) Counter(name, help string) prometheus.Counter {
	return add(r, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

// CounterVec makes and registers a counter with labels.
func (r *Registrar) CounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return add(r, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
}

// Gauge makes and registers a gauge.
func (r *Registrar) Gauge(name, help string) prometheus.Gauge {
	return add(r, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

// GaugeVec makes and registers a gauge with labels.
func (r *Registrar) GaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return add(r, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
}

// GaugeFunc makes and registers a gauge that reads its value at scrape time.
func (r *Registrar) GaugeFunc(name, help string, value func() float64) {
	add(r, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value))
}

// Histogram makes and registers a histogram.
func (r *Registrar) Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return add(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}))
}

// HistogramVec makes and registers a histogram with labels.
func (r *Registrar) HistogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return add(r, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels))
}

// Zero creates the series of values, of a vector with one label, at 0: a
// rate or an increase over a series born with its first event misses that
// event, and a dashboard sees 0 rather than nothing.
func Zero(v *prometheus.MetricVec, values ...string) {
	for _, value := range values {
		_, _ = v.GetMetricWithLabelValues(value)
	}
}
