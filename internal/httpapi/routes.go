package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// edge is what every route of the service needs, built once per server so
// the metrics are registered once even when two listeners serve them.
type edge struct {
	cfg    Config
	svc    Service
	pay    Payments
	log    *slog.Logger
	m      *metrics
	scrape http.Handler // /metrics, built once: its in-flight limit is per handler
	tasks  AdminTasks   // nil: the Service has no admin tasks
	// adminFails limits an address after repeated wrong admin tokens,
	// shared by every guarded prefix of every listener.
	adminFails *adminFailures
	ready      *readyCheck // /readyz and seckill_ready, cached ReadyCacheTTL
	limits     *rateLimits // every public route's, shared by both listeners
	pricer     Pricer      // nil: the Service sets no prices
	cancel     Canceller   // nil: no buyer cancel
	queue      Queue       // nil: no waiting rooms
	rooms      RoomAdmin   // nil: no waiting rooms
	stopper    Stopper     // nil: sales cannot be paused or ended
}

// useCommon installs the middleware every listener runs; every path under
// one of the guarded prefixes needs the admin token.
func (e *edge) useCommon(r *gin.Engine, guarded ...string) {
	mw := []gin.HandlerFunc{traceRequests(e.cfg.Tracing), requestID(), noSniff(), noStoreByDefault(), observe(e.log, e.m), recoverPanics()}
	for _, prefix := range guarded {
		mw = append(mw, requireAdminUnder(prefix, e.cfg.AdminToken, e.adminFails))
	}
	r.Use(append(mw, limitBody(MaxBodyBytes))...)
	// Without the admin guard this is the public listener of NewServers:
	// the ops paths are on the admin listener.
	r.NoRoute(handleNotFound(len(guarded) == 0))
	r.NoMethod(handleMethodNotAllowed())
}

// addRoutes is the whole URL space of the service on one listener.
func addRoutes(r *gin.Engine, e *edge) {
	e.useCommon(r, adminPrefix)
	addPublicRoutes(r, e)
	r.GET("/metrics", e.metricsHandler())
	addAdminRoutes(r, e)
}

// addPublicRoutes are the buyer API, the probes and the document.
func addPublicRoutes(r *gin.Engine, e *edge) {
	svc, pay, m, lim := e.svc, e.pay, e.m, e.limits
	// The probes are never rate limited: an orchestrator must see the truth.
	// GET /healthz is answered ahead of the engine (healthzFront); this
	// route serves the requests the front passes on, such as HEAD's 405.
	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(e.ready))
	r.GET("/openapi.yaml", lim.globalOnly(), handleOpenAPI(e.cfg.OpenAPI))

	buyer := r.Group("/api/v1")
	buyer.GET("/activities/:id", lim.optionalUser(e.cfg), handleActivity(svc))
	buyer.POST("/activities/:id/orders",
		countPurchases(m),
		requireUser(e.cfg),
		lim.purchase(),
		handleBuy(svc),
	)
	buyer.GET("/activities/:id/orders/mine", requireUser(e.cfg), lim.buyerRoute(), handleMyOrder(svc, pay))
	addCancelRoute(buyer, e.cancel, requireUser(e.cfg), lim.buyerRoute())
	addQueueRoutes(buyer, e.queue,
		[]gin.HandlerFunc{requireUser(e.cfg), lim.join()},
		[]gin.HandlerFunc{requireUser(e.cfg), lim.buyerRoute()})
	if pay != nil {
		buyer.POST("/payments/callback", lim.globalOnly(), handlePaymentCallback(pay, e.cfg.callbackWait()))
	}
}

// addAdminRoutes is the ops API; requireAdminUnder guards it, and every
// other path under /admin/.
func addAdminRoutes(r *gin.Engine, e *edge) {
	svc, pay := e.svc, e.pay
	admin := r.Group("/admin/v1")
	admin.POST("/activities", handleCreateActivity(svc))
	admin.POST("/activities/:id/preload", handlePreload(svc))
	admin.GET("/activities/:id/audit", handleAudit(svc, pay))
	admin.POST("/activities/:id/reconcile", handleReconcile(svc))
	addAdminTaskRoutes(admin, e.tasks)
	addPriceRoute(admin, e.pricer)
	addRoomRoutes(admin, e.rooms)
	addStopRoutes(admin, e.stopper)
}

// MetricsMaxInFlight is how many /metrics scrapes run at once; promhttp
// answers more with 503. A scrape reads the database (the order counts), so
// scrapers, however many, never take more than this many of the pool's
// connections from buyers.
const MetricsMaxInFlight = 4

// MetricsTimeout is how long one /metrics scrape may take before promhttp
// answers it 503 (under both listeners' write timeouts, so the scraper gets
// an answer rather than a cut connection). A Prometheus scrape times out
// after 10 s by default.
const MetricsTimeout = 5 * time.Second

// newMetricsHandler serves g's metrics in the Prometheus formats, limited by
// MetricsMaxInFlight and MetricsTimeout.
func newMetricsHandler(g prometheus.Gatherer) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{
		MaxRequestsInFlight: MetricsMaxInFlight,
		Timeout:             MetricsTimeout,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The timeout's 503 (http.TimeoutHandler) names no type; every
		// other answer of promhttp sets its own over this one.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		h.ServeHTTP(w, r)
	})
}

func (e *edge) metricsHandler() gin.HandlerFunc { return gin.WrapH(e.scrape) }

// pprofPrefix starts every path of pprof on the admin listener.
const pprofPrefix = "/debug/pprof/"

// addOpsListenerRoutes is the admin listener's URL space: the ops API,
// /metrics, pprof and the probes (so the listener itself can be probed).
// pprof is served here only, never on the public listener: a profile shows
// the program's internals, and a CPU profile costs CPU on demand, so it
// needs the admin token like the ops API. /metrics and the probes
// stay open, for Prometheus and the orchestrator.
func addOpsListenerRoutes(r *gin.Engine, e *edge) {
	e.useCommon(r, adminPrefix, pprofPrefix)
	r.GET("/healthz", handleHealthz())
	r.GET("/readyz", handleReadyz(e.ready))
	r.GET("/metrics", e.metricsHandler())
	addAdminRoutes(r, e)
	r.GET("/debug/pprof/", gin.WrapF(pprof.Index))
	r.GET("/debug/pprof/:profile", handlePprof)
	r.POST("/debug/pprof/:profile", handlePprof) // symbol lookups may POST
}

// handlePprof serves one of net/http/pprof's endpoints by name.
func handlePprof(c *gin.Context) {
	switch name := c.Param("profile"); name {
	case "cmdline":
		pprof.Cmdline(c.Writer, c.Request)
	case "profile":
		pprof.Profile(c.Writer, c.Request)
	case "symbol":
		pprof.Symbol(c.Writer, c.Request)
	case "trace":
		pprof.Trace(c.Writer, c.Request)
	default:
		pprof.Handler(name).ServeHTTP(c.Writer, c.Request)
	}
}
