package outbox

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// Metrics are the relay's: the backlog the sink has not acknowledged, and
// what it sent. Nil methods are no-ops.
type Metrics struct {
	pending, oldest prometheus.Gauge
	sentTotal       prometheus.Counter
	failures        prometheus.Counter
}

// NewMetrics registers the relay's metrics on reg.
func NewMetrics(reg prometheus.Registerer, log *slog.Logger) *Metrics {
	r := promreg.NewRegistrar(reg, log)
	return &Metrics{
		pending: r.Gauge("seckill_events_pending",
			"Order events written and not yet acknowledged by the sink (all instances' backlog, as this one last counted it)."),
		oldest: r.Gauge("seckill_events_oldest_pending_seconds",
			"Age of the oldest order event not yet acknowledged by the sink; 0 with none pending."),
		sentTotal: r.Counter("seckill_events_sent_total", "Order events this instance's relay sent and the sink acknowledged."),
		failures:  r.Counter("seckill_events_send_failures_total", "Batches of order events the sink did not acknowledge (sent again later)."),
	}
}

func (m *Metrics) backlog(n int64, oldest, now time.Time) {
	if m == nil {
		return
	}
	m.pending.Set(float64(n))
	age := 0.0
	if n > 0 && !oldest.IsZero() {
		age = max(now.Sub(oldest).Seconds(), 0)
	}
	m.oldest.Set(age)
}

func (m *Metrics) sent(n int) {
	if m != nil {
		m.sentTotal.Add(float64(n))
	}
}

func (m *Metrics) sendFailed() {
	if m != nil {
		m.failures.Inc()
	}
}
