package books

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// metrics are the books side's numbers.
type metrics struct {
	reconciled prometheus.Counter
	repaired   *prometheus.CounterVec
}

// Reasons of a books repair (seckill_books_repaired_units_total).
const (
	repairRedisLow  = "redis_low"  // units deducted or sold-then-expired that never came back: returned
	repairRedisHigh = "redis_high" // Redis held units the database has sold: taken off
	repairNotLoaded = "not_loaded" // the stock was gone from Redis: loaded
)

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		reconciled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seckill_reconcile_changes_total",
			Help: "Preloads and reconciliations that changed the stock in Redis.",
		}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_books_repaired_units_total",
			Help: "Units the background books sweep put right in Redis (total - sold, under the activity's lock and fence), by reason: redis_low (returned), redis_high (taken off), not_loaded (loaded).",
		}, []string{"reason"}),
	}
	// Every reason exists from start-up, so a dashboard and an alert on it
	// see zero rather than nothing.
	for _, r := range []string{repairRedisLow, repairRedisHigh, repairNotLoaded} {
		m.repaired.WithLabelValues(r)
	}
	r := promreg.NewRegistrar(reg)
	promreg.Add(r, &m.reconciled)
	promreg.Add(r, &m.repaired)
	if err := r.Err(); err != nil {
		return metrics{}, fmt.Errorf("books: %w", err)
	}
	return m, nil
}
