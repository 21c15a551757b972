package waitingroom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

type metrics struct {
	waiting, open, etaError *prometheus.GaugeVec
	admitted, lapsed        *prometheus.CounterVec
	stepFailures            prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"activity_id"})
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"activity_id"})
	}
	m := &metrics{
		waiting:  gauge("seckill_waiting_room_waiting", "Places in the activity's waiting room not yet admitted, as this instance's last step saw them."),
		open:     gauge("seckill_waiting_room_admitted_open", "Admissions given and not yet used up or lapsed, as this instance's last step saw them."),
		etaError: gauge("seckill_waiting_room_eta_error_ratio", "How far the admissions of the last 10 s were from what the measured rate promised: |promised-given|/max."),
		admitted: counter("seckill_waiting_room_admitted_total", "Admissions this instance's steps gave."),
		lapsed:   counter("seckill_waiting_room_lapsed_total", "Admissions that lapsed unused, found by this instance's steps."),
		stepFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "seckill_waiting_room_step_failures_total",
			Help: "Steps of a waiting room that failed (Redis did not answer); the next step retries."}),
	}
	r := promreg.NewRegistrar(reg)
	promreg.Add(r, &m.waiting)
	promreg.Add(r, &m.open)
	promreg.Add(r, &m.etaError)
	promreg.Add(r, &m.admitted)
	promreg.Add(r, &m.lapsed)
	promreg.Add(r, &m.stepFailures)
	if err := r.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// forget drops the gauges of a room no longer stepped, so they do not
// stand at their last values (the stuck-queue alert reads them).
func (m *metrics) forget(activityID int64) {
	label := strconv.FormatInt(activityID, 10)
	m.waiting.DeleteLabelValues(label)
	m.open.DeleteLabelValues(label)
	m.etaError.DeleteLabelValues(label)
}
