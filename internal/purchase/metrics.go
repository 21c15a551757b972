package purchase

import (
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
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.remaining, m.returned, m.leaked, m.reconciled} {
		if err := reg.Register(c); err != nil {
			return metrics{}, fmt.Errorf("purchase: register metrics: %w", err)
		}
	}
	return m, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
