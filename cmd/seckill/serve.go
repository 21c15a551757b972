package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/docs"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/tracing"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// demoAddr is where the demo listens unless SECKILL_HTTP_ADDR names another
// loopback address: it approves every user and prints an admin token, so it
// must not be reachable from the network.
const demoAddr = "127.0.0.1:8080"

// serve runs the HTTP API: on the configured stores, or with demo on the
// in-process ones. Neither falls back to the other. It is the process's
// life in order, each part's clean-up deferred where the part starts, which
// is why it is a little long.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, demo bool) error {
	cfg, err := serveConfig(args, getenv, stderr, demo)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	logSecurity(cfg, log)
	warnUnknownVars(environ(), log)
	stopTracing, err := startTracing(ctx, getenv, cfg.Tracing, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	reg := newRegistry()

	users, closeUsers := userVerifier(cfg, log, reg)
	defer closeUsers()

	b, err := openBackend(ctx, cfg, users, log, reg)
	if err != nil {
		return err
	}
	defer b.Close()
	defer startAdmitter(ctx, b)() // stopped before the stores close
	relay, err := startRelay(cfg, b, log, reg)
	if err != nil {
		return err
	}
	defer closeRelay(b, relay) // before b.Close: it uses the stores
	pay, err := openPayments(cfg, cfg.embedded(), b, log, reg)
	if err != nil {
		return err
	}
	defer pay.Close() // before b.Close: the delay queue uses the stores

	generatedToken := ensureAdminToken(&cfg, demo, log)

	l, err := listen(ctx, cfg, apiConfig(cfg), apiDeps(b, pay, log, reg), log)
	if err != nil {
		return err
	}
	defer l.close()
	l.srv.RegisterOnShutdown(b.core.Rooms.ReleaseHolds) // held requests must not hold up the shutdown
	ln := l.ln
	pay.serving(ln.Addr())
	if demo {
		// Before serving, so that whoever waits for "listening" finds it.
		showDemo(ctx, b, pay, cfg, generatedToken, ln.Addr(), stdout, log)
	}
	log.Info("listening", "addr", ln.Addr().String(), "admin_addr", l.adminAddr(), "version", version, "embedded", demo)
	// Past the shutdown timeout, the handlers still running are waited for
	// (their connections cut) before the stores close under them: a
	// purchase a batch has taken ends within the queue wait, its lease and
	// the detached clean-up after it.
	if err := l.serve(ctx, cfg.ShutdownTimeout, cfg.LockWait+cfg.LockTTL+10*time.Second, log); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// apiDeps are the HTTP edge's parts: the backend's purchase service, books
// and rooms, and the payments.
func apiDeps(b *backend, pay *payments, log *slog.Logger, reg *prometheus.Registry) httpapi.Deps {
	return httpapi.Deps{
		Service: edge{b.core.Sales, b.core.Books}, Tasks: b.core.Books, Pricer: b.core.Books, Rooms: b.core.Books, Queue: b.core.Rooms,
		Payments: pay.api(), Canceller: pay.canceller(), Stopper: b.core.Books,
		Logger: log, Registry: reg, Gatherer: reg,
	}
}

// edge is the service the HTTP edge serves: purchases, a buyer's order and
// readiness from the purchase path, the activities and their books from the
// books side.
type edge struct {
	*sales
	*ledger
}

type (
	sales  = purchase.Service
	ledger = books.Service
)

// The real services must keep satisfying what the edge needs of them.
var (
	_ httpapi.Service    = edge{}
	_ httpapi.AdminTasks = (*books.Service)(nil)
	_ httpapi.Pricer     = (*books.Service)(nil)
	_ httpapi.RoomAdmin  = (*books.Service)(nil)
)

// newRegistry is the process's metrics registry, with the Go runtime's and
// the process's own collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// startAdmitter runs the waiting rooms' admitter (waitingroom.Room.Run)
// until the returned stop, which waits for it and stops the rooms' watches
// of held requests (answered at once when the shutdown begins, by the
// public server's RegisterOnShutdown; this stop is for every other exit).
func startAdmitter(ctx context.Context, b *backend) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.core.Rooms.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		b.core.Rooms.ReleaseHolds()
	}
}

// serveConfig reads serve's (or demo's) flags and the configuration, and
// holds the mode to its stores.
func serveConfig(args []string, getenv func(string) string, stderr io.Writer, demo bool) (config, error) {
	name := "serve"
	if demo {
		name = "demo"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := parseFlags(fs, args); err != nil {
		return config{}, err
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return config{}, err
	}
	if err := checkMode(&cfg, demo, cfg.set["SECKILL_HTTP_ADDR"]); err != nil {
		return config{}, err
	}
	if err := cfg.checkSecure(); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// ensureAdminToken gives the demo a generated admin token when none is set,
// and reports whether it did: a generated token goes to stdout for the
// person at the terminal, never to the log.
func ensureAdminToken(cfg *config, demo bool, log *slog.Logger) (generated bool) {
	if demo && cfg.AdminToken == "" {
		cfg.AdminToken, generated = randomToken(), true
	}
	if cfg.AdminToken == "" {
		log.Warn("SECKILL_ADMIN_TOKEN is unset: the admin API answers 403 admin_disabled")
	}
	return generated
}

// showDemo creates the demo's activity and prints how to use it.
func showDemo(ctx context.Context, b *backend, pay *payments, cfg config, generatedToken bool, addr net.Addr, stdout io.Writer, log *slog.Logger) {
	id, err := startDemo(ctx, b, cfg.AdminToken, generatedToken, addr, stdout)
	if err != nil {
		log.Error("demo activity", "err", err)
		return
	}
	pay.printDemo(stdout, "http://"+hostPort(addr), id, cfg.PaymentWindow)
	printEventsDemo(stdout, cfg, b)
}

// startTracing installs the tracer provider the OTEL_* variables ask for
// (on: they ask for spans), and returns what flushes it at exit.
func startTracing(ctx context.Context, getenv func(string) string, on bool, log *slog.Logger) (stop func(), err error) {
	stopTracing, err := tracing.Setup(ctx, getenv, "seckill", version)
	if err != nil {
		return nil, err
	}
	if on {
		log.Info("tracing on: spans exported as the OTEL_* variables say")
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("tracing: spans not flushed at exit", "err", err)
		}
	}, nil
}

// userVerifier is the user-verification client of SECKILL_USERCHECK_URL,
// or approve-all when none is set, with what closes it.
func userVerifier(cfg config, log *slog.Logger, reg prometheus.Registerer) (usercheck.Verifier, func()) {
	if cfg.UserCheckURL == "" {
		if !cfg.ApproveAll && !cfg.relaxed() { // relaxed: said by logSecurity's one warning
			log.Warn("SECKILL_USERCHECK_URL is unset: every user is approved without verification")
		}
		return usercheck.ApproveAll{}, func() {}
	}
	uc := usercheck.New(usercheck.Config{
		BaseURL:  cfg.UserCheckURL,
		Timeout:  cfg.UserCheckTimeout,
		Logger:   log,
		Registry: reg,
	})
	log.Info("user check on", "url", redactedURL(cfg.UserCheckURL), "timeout", cfg.UserCheckTimeout.String())
	return uc, uc.Close
}

// apiConfig is the HTTP API's configuration. The global burst is one
// second's worth: a limit, not a smoothing of short peaks. A user's is
// userBurstSeconds' worth: a person's burst (an app retrying, a test's 100
// concurrent purchases) is short and must pass; a flood is not.
func apiConfig(cfg config) httpapi.Config {
	return httpapi.Config{
		AdminToken:       cfg.AdminToken,
		GlobalRate:       cfg.RateGlobal,
		GlobalBurst:      int(math.Ceil(cfg.RateGlobal)),
		UserRate:         cfg.RatePerUser,
		UserBurst:        int(math.Ceil(cfg.RatePerUser * userBurstSeconds)),
		ReadRate:         cfg.RatePerUserReads,
		JoinAddressRate:  cfg.RateJoinsPerAddress,
		JoinAddressBurst: int(math.Ceil(cfg.RateJoinsPerAddress * userBurstSeconds)),
		ReadBurst:        int(math.Ceil(cfg.RatePerUserReads * userBurstSeconds)),
		OpenAPI:          docs.OpenAPI,
		// nil unless set: X-User-ID trusted unsigned, as before.
		IdentitySecret: identitySecret(cfg),
		// Versions 3 and 2 only when SECKILL_IDENTITY_LEGACY=false.
		IdentityRejectLegacy: !cfg.IdentityLegacy,
		Tracing:              cfg.Tracing,
		// Room for a callback's wait for the order's lock (a lease), for
		// the previous query's second, and a provider query of its own
		// (half a lease).
		CallbackWait: max(httpapi.DefaultCallbackWait, 2*cfg.LockTTL+time.Second),
	}
}

// serveUntil serves on ln until ctx ends, then shuts srv down: it stops
// accepting and lets in-flight requests finish for up to timeout. Then it
// cuts their connections, which cancels the requests' contexts, and waits up
// to drain more for their handlers to return, so that whatever the caller
// closes next (the stores) is not closed under a handler still using it.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, timeout, drain time.Duration, log *slog.Logger) error {
	h := &tracked{h: srv.Handler}
	srv.Handler = h
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "timeout", timeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("shutdown timed out: closing open connections", "err", err, "handlers", h.running.Load())
		_ = srv.Close()
		if !h.wait(drain) {
			log.Error("handlers still running after the drain; closing anyway", "handlers", h.running.Load(), "drain", drain.String())
		}
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tracked counts the handlers running, so a shutdown can wait for them after
// it cut their connections (http.Server.Close does not).
type tracked struct {
	h       http.Handler
	running atomic.Int64
}

func (t *tracked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.running.Add(1)
	defer t.running.Add(-1)
	t.h.ServeHTTP(w, r)
}

// wait reports whether every handler returned within d.
func (t *tracked) wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for t.running.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// startDemo creates and preloads a demo activity and tells the person at the
// terminal how to try it. It returns the activity's id.
func startDemo(ctx context.Context, b *backend, token string, printToken bool, addr net.Addr, stdout io.Writer) (int64, error) {
	now := time.Now().UTC().Truncate(time.Second)
	a, err := b.core.Books.CreateActivity(ctx, seckill.Activity{
		Name:       "Moutai 53%",
		TotalStock: 100,
		StartsAt:   now.Add(-time.Minute),
		EndsAt:     now.Add(24 * time.Hour),
		PriceMinor: 149900, // 1,499.00 CNY: a payment must match it
		Currency:   "CNY",
	})
	if err != nil {
		return 0, fmt.Errorf("create: %w", err)
	}
	if _, err := b.core.Books.Preload(ctx, a.ID); err != nil {
		return 0, fmt.Errorf("preload: %w", err)
	}
	base := "http://" + hostPort(addr)
	auth := `"Authorization: Bearer $SECKILL_ADMIN_TOKEN"`
	if printToken {
		fmt.Fprintf(stdout, "\nEmbedded mode: in-process Redis and SQLite, every user approved; data is lost on exit.\n")
		fmt.Fprintf(stdout, "Admin token (generated for this run): %s\n", token)
		auth = `"Authorization: Bearer ` + token + `"`
	}
	fmt.Fprintf(stdout, "Demo activity %d: %q, %d units at %d.%02d %s, on sale until %s. Try:\n\n", a.ID, a.Name, a.TotalStock,
		a.PriceMinor/100, a.PriceMinor%100, a.Currency, a.EndsAt.Format(time.RFC3339))
	// -w '\n': the API's answers end without a newline, and the prompt
	// would land on the JSON.
	fmt.Fprintf(stdout, "  curl -s -w '\\n' %s/api/v1/activities/%d\n", base, a.ID)
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -X POST -H 'X-User-ID: 42' %s/api/v1/activities/%d/orders\n", base, a.ID)
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -H %s %s/admin/v1/activities/%d/audit\n\n", auth, base, a.ID)
	if err := startDemoRoom(ctx, b, now, base, stdout); err != nil {
		return 0, err
	}
	return a.ID, nil
}

// demoRoomLead is how long after the demo starts its waiting-room sale
// does: the time to join the pre-queue before the draw.
const demoRoomLead = 2 * time.Minute

// startDemoRoom creates the demo's second activity, one with a waiting room,
// and prints how to join, poll and buy.
func startDemoRoom(ctx context.Context, b *backend, now time.Time, base string, stdout io.Writer) error {
	a, err := b.core.Books.CreateActivity(ctx, seckill.Activity{
		Name:        "Moutai 53% (waiting room)",
		TotalStock:  10,
		StartsAt:    now.Add(demoRoomLead),
		EndsAt:      now.Add(24 * time.Hour),
		PriceMinor:  149900,
		Currency:    "CNY",
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now},
	})
	if err != nil {
		return fmt.Errorf("create the waiting-room activity: %w", err)
	}
	fmt.Fprintf(stdout, "Demo activity %d: %q, %d units, sold through a waiting room: join before %s and everyone who\n",
		a.ID, a.Name, a.TotalStock, a.StartsAt.Format(time.RFC3339))
	fmt.Fprintf(stdout, "did gets a random place then; later joiners queue behind. Join, poll (as refresh_s says), buy once admitted:\n\n")
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -X POST -H 'X-User-ID: 7' %s/api/v1/activities/%d/queue\n", base, a.ID)
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -H 'X-User-ID: 7' %s/api/v1/activities/%d/queue/mine\n", base, a.ID)
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -X POST -H 'X-User-ID: 7' %s/api/v1/activities/%d/orders\n\n", base, a.ID)
	return nil
}

// hostPort is addr as a client on this machine reaches it: a wildcard listen
// address becomes localhost.
func hostPort(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
