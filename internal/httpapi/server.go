// Package httpapi is the HTTP edge of the seckill service: it implements the
// contract in docs/API.md on gin and nothing else.
//
// It exists so the purchase flow never sees HTTP and the contract lives in
// one place: every request is validated here before it reaches the purchase
// service (ids, headers, bodies decoded strictly, sizes bounded), and every
// error code is turned into an HTTP status by one function (statusOf). Every
// answer, including unknown routes and recovered panics, is JSON; the only
// exception is /metrics, which speaks the Prometheus text format.
//
// Input policy, beyond the contract's words:
//   - ids (X-User-ID and the activity id in the path) are canonical decimals:
//     ASCII digits only, no sign, no spaces, no leading zero, 1..2^63-1. "042"
//     is rejected rather than read as 42, so one identity has one spelling in
//     logs, metrics and rate limits.
//   - X-User-ID and Idempotency-Key must be sent at most once; two values of
//     the header are rejected rather than one of them picked.
//   - JSON bodies are decoded member by member: names match exactly (not
//     case-insensitively, as encoding/json would), each at most once, unknown
//     names are rejected, the body must be valid UTF-8 and hold exactly one
//     value. A purchase body's "quantity" must be the integer 1; null is
//     rejected like any other quantity.
//   - an activity name must not be blank nor contain control characters.
//   - times are answered in RFC 3339 UTC with as many fractional digits as
//     they carry (time.RFC3339Nano): whole seconds print without a fraction,
//     and a window edge is never rounded to a time when it is not yet open.
//
// gin prints route tables and warnings to stdout in its global debug mode;
// the binary should call gin.SetMode(gin.ReleaseMode) once at start-up.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/promreg"
)

// Service is what the HTTP edge needs of the service: cmd/seckill serves it
// from *purchase.Service and *books.Service together. Errors it returns are *seckill.Error with a
// contract code; any other error is answered 500 internal (or 503 unavailable
// for a context deadline or cancellation).
type Service interface {
	Buy(ctx context.Context, req seckill.BuyRequest) (seckill.Order, error)
	Activity(ctx context.Context, id int64) (seckill.ActivityView, error)
	// BuyerActivity is Activity as buyers may see it (an unannounced
	// activity is not found until its start).
	BuyerActivity(ctx context.Context, id int64) (seckill.ActivityView, error)
	MyOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error)
	CreateActivity(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error)
	Preload(ctx context.Context, id int64) (remaining int64, err error)
	Audit(ctx context.Context, id int64) (seckill.Audit, error)
	Reconcile(ctx context.Context, id int64) (seckill.Reconciliation, error)
	Ready(ctx context.Context) error
}

// Config tunes the HTTP edge. The zero value serves the buyer API without
// rate limits and with the admin API disabled.
type Config struct {
	// AdminToken is the bearer token of the ops API. Empty disables the ops
	// API: it answers 403 admin_disabled and never runs open.
	AdminToken string

	// UserRate is how many purchase attempts per second one user may make,
	// with bursts of UserBurst; 0 (or less) means no per-user limit. A burst
	// below 1 counts as 1.
	UserRate  float64
	UserBurst int
	// ReadRate and ReadBurst limit one user's other buyer requests
	// (orders/mine, cancel, an activity read naming the user) the same way,
	// in a bucket of their own so a polled result page never spends the
	// purchase's attempts; 0 means no limit. Off by default: the contract
	// answers these routes without a 429.
	ReadRate  float64
	ReadBurst int
	// JoinAddressRate and JoinAddressBurst limit the waiting-room joins of
	// one client address (an IPv6 one by its /64), beside the user's; 0
	// means no limit. Off by default: behind a gateway every client has
	// the gateway's address.
	JoinAddressRate  float64
	JoinAddressBurst int
	// GlobalRate and GlobalBurst limit the requests of all users together
	// to every public route but /healthz and /readyz, the same way.
	GlobalRate  float64
	GlobalBurst int
	// MaxTrackedUsers bounds how many per-user buckets are kept; the least
	// recently used is forgotten first. 0 means DefaultMaxTrackedUsers.
	MaxTrackedUsers int

	// OpenAPI is the contract's OpenAPI document, served read-only at
	// GET /openapi.yaml (docs.OpenAPI); empty answers 404 there.
	OpenAPI []byte

	// IdentitySecret, when set, is the key of the gateway's signature of
	// X-User-ID (SECKILL_IDENTITY_SECRET, identity.go): a buyer request
	// without a valid X-User-Timestamp and X-User-Signature is 401. Empty:
	// X-User-ID is trusted as the gateway set it.
	IdentitySecret []byte
	// IdentityRejectLegacy, with IdentitySecret, accepts only the versioned
	// signatures (SignIdentityV3, which covers the method, path and body,
	// and SignIdentityV2 for a request without a body); false (the default)
	// also accepts the legacy one (SignIdentity)
	// (SECKILL_IDENTITY_LEGACY=false sets it).
	IdentityRejectLegacy bool

	// Tracing starts a server span per request under the global tracer
	// provider (tracing.Setup with an exporter). Off, the caller's trace
	// context is still carried to the outgoing calls, without spans.
	Tracing bool

	// Now is the clock of the identity signature's window, of the /readyz
	// cache and of the admin failure limit; nil means time.Now.
	Now func() time.Time

	// CallbackWait bounds a payment callback's verification: past it the
	// callback is answered 503 with Retry-After (the order is verified
	// again later) rather than kept waiting. 0 means DefaultCallbackWait.
	CallbackWait time.Duration
}

// DefaultCallbackWait is CallbackWait's default: a provider's callback is
// answered within it, long enough for the second a callback may wait for
// the order's previous provider query plus a query of its own, and well
// within the provider's own timeout.
const DefaultCallbackWait = 5 * time.Second

func (c Config) callbackWait() time.Duration {
	if c.CallbackWait > 0 {
		return c.CallbackWait
	}
	return DefaultCallbackWait
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// DefaultMaxTrackedUsers is the number of per-user rate-limit buckets kept
// when Config.MaxTrackedUsers is 0: about 20 MB at most.
const DefaultMaxTrackedUsers = 100_000

// MaxBodyBytes is the largest request body accepted; larger ones are answered
// 413 request_too_large.
const MaxBodyBytes = 64 << 10

// Deps are the HTTP edge's dependencies.
type Deps struct {
	// Service runs purchases and ops operations. Required.
	Service Service
	// The optional parts of the contract; each nil leaves its routes out.
	Tasks     AdminTasks // the admin listings, stock adjustment and refunds
	Pricer    Pricer     // activities' prices
	Rooms     RoomAdmin  // turning waiting rooms on and off
	Queue     Queue      // the buyers' waiting rooms
	Canceller Canceller  // the buyer's cancel (with payments on)
	Stopper   Stopper    // pausing, resuming and ending sales
	// Payments verifies payments; nil when payments are off (no callback
	// endpoint, no verification on orders/mine, audit counts 0).
	Payments Payments
	// Logger receives one access-log record per request (but GET /healthz:
	// healthzFront) and the causes of 5xx answers. nil discards.
	Logger *slog.Logger
	// Registry receives the HTTP metrics. nil: a private registry, served at
	// /metrics.
	Registry prometheus.Registerer
	// Gatherer is what /metrics serves. nil: Registry when it is a Gatherer
	// (as *prometheus.Registry is), else nothing.
	Gatherer prometheus.Gatherer
}

// NewServer returns the handler of the whole contract: buyer API, ops API,
// /healthz, /readyz, /metrics and /openapi.yaml. It starts no goroutines.
func NewServer(cfg Config, deps Deps) http.Handler {
	e := newEdge(cfg, deps)
	r := newEngine()
	addRoutes(r, e)
	return healthzFront{r}
}

// NewServers returns the handlers of two listeners (SECKILL_ADMIN_ADDR):
// public serves the buyer API, the payment callback, /healthz, /readyz and
// /openapi.yaml, and answers 404 for everything else, the ops API and
// /metrics included; ops serves the ops API (behind its token, as on one
// listener), /metrics, /healthz, /readyz and pprof under /debug/pprof/. The
// metrics count the requests of both. It starts no goroutines.
func NewServers(cfg Config, deps Deps) (public, ops http.Handler) {
	e := newEdge(cfg, deps)
	pub := newEngine()
	e.useCommon(pub)
	addPublicRoutes(pub, e)
	adm := newEngine()
	addOpsListenerRoutes(adm, e)
	return healthzFront{pub}, healthzFront{adm}
}

func newEdge(cfg Config, deps Deps) *edge {
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg, gatherer := deps.Registry, deps.Gatherer
	if reg == nil {
		private := prometheus.NewRegistry()
		reg = private
		if gatherer == nil {
			gatherer = private
		}
	}
	if gatherer == nil {
		if g, ok := reg.(prometheus.Gatherer); ok {
			gatherer = g
		} else {
			gatherer = prometheus.NewRegistry()
		}
	}
	r := promreg.NewRegistrar(reg, log)
	e := &edge{cfg: cfg, svc: observeBooks(deps.Service, r), pay: deps.Payments, log: log, m: newMetrics(r), scrape: newMetricsHandler(hidingGatherer{gatherer, deps.Service})}
	e.ready = newReadyCheck(deps.Service, cfg.now)
	registerReady(r, e.ready)
	e.adminFails = newAdminFailures(cfg.now, log)
	e.limits = newRateLimits(cfg, e.m)
	e.tasks, e.pricer, e.rooms, e.queue, e.cancel = deps.Tasks, deps.Pricer, deps.Rooms, deps.Queue, deps.Canceller
	e.stopper = deps.Stopper
	return e
}

func newEngine() *gin.Engine {
	r := gin.New()
	// A redirect would answer with an HTML body; an unknown path is a JSON 404.
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	// Client addresses come from the connection, never from headers a client sets.
	r.ForwardedByClientIP = false
	return r
}
