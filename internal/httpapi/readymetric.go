package httpapi

import (
	"context"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// registerReady exports seckill_ready: 1 when Redis and the database answer
// (what GET /readyz answers 200 for), 0 otherwise, checked at scrape time
// within readyTimeout (the result shared with /readyz for ReadyCacheTTL). Prometheus cannot probe /readyz itself, and an
// instance that answers scrapes but not its dependencies is not serving.
func registerReady(r *promreg.Registrar, rc *readyCheck) {
	r.GaugeFunc("seckill_ready", "1 when Redis and the database answer (GET /readyz would answer 200), else 0; checked at scrape time.", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		defer cancel()
		if err := rc.ready(ctx); err != nil {
			return 0
		}
		return 1
	})
}
