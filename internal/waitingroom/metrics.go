package waitingroom

import (
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

type metrics struct {
	waiting, open, etaError *prometheus.GaugeVec
	admitted, lapsed        *prometheus.CounterVec
	stepFailures, full      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, log *slog.Logger) *metrics {
	r := promreg.NewRegistrar(reg, log)
	return &metrics{
		waiting: r.GaugeVec("seckill_waiting_room_waiting",
			"Places in the activity's waiting room not yet admitted, as this instance's last step saw them.", "activity_id"),
		open: r.GaugeVec("seckill_waiting_room_admitted_open",
			"Admissions given and not yet used up or lapsed, as this instance's last step saw them.", "activity_id"),
		etaError: r.GaugeVec("seckill_waiting_room_eta_error_ratio",
			"How far the admissions of the last 10 s were from what the measured rate promised: |promised-given|/max.", "activity_id"),
		admitted: r.CounterVec("seckill_waiting_room_admitted_total", "Admissions this instance's steps gave.", "activity_id"),
		lapsed: r.CounterVec("seckill_waiting_room_lapsed_total",
			"Admissions that lapsed unused, found by this instance's steps.", "activity_id"),
		stepFailures: r.Counter("seckill_waiting_room_step_failures_total",
			"Steps of a waiting room that failed (Redis did not answer); the next step retries."),
		full: r.Counter("seckill_waiting_room_full_total",
			"Joins refused 429 busy because the room held SECKILL_ROOM_MAX_PLACES places not yet admitted."),
	}
}

// forget drops the gauges of a room no longer stepped, so they do not
// stand at their last values (the stuck-queue alert reads them).
func (m *metrics) forget(activityID int64) {
	label := strconv.FormatInt(activityID, 10)
	m.waiting.DeleteLabelValues(label)
	m.open.DeleteLabelValues(label)
	m.etaError.DeleteLabelValues(label)
}
