package httpapi

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// addRoutes is the whole URL space of the service.
func addRoutes(r *gin.Engine, cfg Config, svc Service, pay Payments, log *slog.Logger, m *metrics, gatherer prometheus.Gatherer) {
	r.Use(
		requestID(),
		observe(log, m),
		recoverPanics(),
		requireAdminUnder(adminPrefix, cfg.AdminToken),
		limitBody(MaxBodyBytes),
	)
	r.NoRoute(handleNotFound())
	r.NoMethod(handleMethodNotAllowed())

	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(svc))
	r.GET("/metrics", gin.WrapH(promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})))
	r.GET("/openapi.yaml", handleOpenAPI(cfg.OpenAPI))

	buyer := r.Group("/api/v1")
	buyer.GET("/activities/:id", handleActivity(svc))
	buyer.POST("/activities/:id/orders",
		countPurchases(m),
		requireUser(),
		limitRate(cfg, m),
		handleBuy(svc),
	)
	buyer.GET("/activities/:id/orders/mine", requireUser(), handleMyOrder(svc, pay))
	if pay != nil {
		buyer.POST("/payments/callback", handlePaymentCallback(pay))
	}

	admin := r.Group("/admin/v1") // requireAdminUnder guards it, and every other path under /admin/
	admin.POST("/activities", handleCreateActivity(svc, cfg.now))
	admin.POST("/activities/:id/preload", handlePreload(svc))
	admin.GET("/activities/:id/audit", handleAudit(svc, pay))
	admin.POST("/activities/:id/reconcile", handleReconcile(svc))
}
