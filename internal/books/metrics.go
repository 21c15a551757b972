package books

import (
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

func newMetrics(r *promreg.Registrar) metrics {
	m := metrics{
		reconciled: r.Counter("seckill_reconcile_changes_total",
			"Preloads and reconciliations that changed the stock in Redis."),
		repaired: r.CounterVec("seckill_books_repaired_units_total",
			"Units the background books sweep put right in Redis (total - sold, under the activity's lock and fence), by reason: redis_low (returned), redis_high (taken off), not_loaded (loaded).",
			"reason"),
	}
	promreg.Zero(m.repaired.MetricVec, repairRedisLow, repairRedisHigh, repairNotLoaded)
	return m
}
