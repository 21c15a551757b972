package httpapi

import (
	"context"
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/promreg"
)

// bookMetrics exports what the answers of the service say about an
// activity's books, for alerts: an audit's verdict (Prometheus cannot call
// the audit itself; whoever does, an operator or a cron job, leaves its
// result here) and purchases refused because the stock is not in Redis.
// Activity ids come from the service's own answers, never from the request
// alone: only existing activities become label values.
type bookMetrics struct {
	Service
	oversold   *prometheus.GaugeVec   // activity_id
	consistent *prometheus.GaugeVec   // activity_id
	notLoaded  *prometheus.CounterVec // activity_id
}

func observeBooks(svc Service, r *promreg.Registrar) *bookMetrics {
	return &bookMetrics{
		Service: svc,
		oversold: r.GaugeVec("seckill_audit_oversold",
			"1 when the last audit of the activity found more orders than its total stock, else 0.", "activity_id"),
		consistent: r.GaugeVec("seckill_audit_consistent",
			"1 when the last audit of the activity found orders + Redis stock == total, else 0.", "activity_id"),
		notLoaded: r.CounterVec("seckill_stock_not_loaded_total",
			"Purchases refused (503) because the activity's stock is not in Redis: preload it.", "activity_id"),
	}
}

// Audit implements Service.
func (b *bookMetrics) Audit(ctx context.Context, id int64) (seckill.Audit, error) {
	a, err := b.Service.Audit(ctx, id)
	if err == nil {
		label := strconv.FormatInt(a.ActivityID, 10)
		b.oversold.WithLabelValues(label).Set(boolGauge(a.Oversold))
		b.consistent.WithLabelValues(label).Set(boolGauge(a.Consistent))
	}
	return a, err
}

// Buy implements Service.
func (b *bookMetrics) Buy(ctx context.Context, req seckill.BuyRequest) (seckill.Order, error) {
	o, err := b.Service.Buy(ctx, req)
	if errors.Is(err, seckill.ErrStockNotLoaded) {
		b.notLoaded.WithLabelValues(strconv.FormatInt(req.ActivityID, 10)).Inc()
	}
	return o, err
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// seen creates the activity's seckill_stock_not_loaded_total series at 0, so
// that the first refused purchase is an increase Prometheus can see (a
// series born at 1 shows no increase): every activity this instance creates,
// preloads, reconciles or shows has one.
func (b *bookMetrics) seen(id int64) { b.notLoaded.WithLabelValues(strconv.FormatInt(id, 10)) }

// CreateActivity implements Service.
func (b *bookMetrics) CreateActivity(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	v, err := b.Service.CreateActivity(ctx, a)
	if err == nil {
		b.seen(v.ID)
	}
	return v, err
}

// Preload implements Service.
func (b *bookMetrics) Preload(ctx context.Context, id int64) (int64, error) {
	n, err := b.Service.Preload(ctx, id)
	if err == nil {
		b.seen(id)
	}
	return n, err
}

// Reconcile implements Service.
func (b *bookMetrics) Reconcile(ctx context.Context, id int64) (seckill.Reconciliation, error) {
	r, err := b.Service.Reconcile(ctx, id)
	if err == nil {
		b.seen(id)
	}
	return r, err
}

// Activity implements Service.
func (b *bookMetrics) Activity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	v, err := b.Service.Activity(ctx, id)
	if err == nil {
		b.seen(id)
	}
	return v, err
}
