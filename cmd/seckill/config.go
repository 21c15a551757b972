package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/outbound"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/tracing"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// config is the service's configuration, read from the environment through
// the table of settings (settingstable.go).
type config struct {
	HTTPAddr         string
	AdminAddr        string        // "": admin API and /metrics on HTTPAddr, no pprof
	HTTP2Cleartext   bool          // the public listener also speaks h2c with prior knowledge
	RedisURL         string        // "": embedded in-process store
	RedisMode        string        // single, cluster or sentinel
	Redis            redisTopology // parsed RedisURL; zero when embedded
	WaitReplicas     int           // 0: no WAIT
	WaitTimeout      time.Duration
	MySQLDSN         string // "": embedded SQL database
	MySQLMaxConns    int    // the database pool's size
	MigrateDSN       string // migrate's DSN, a user with DDL rights; "": MySQLDSN
	SkipMigrations   bool   // SECKILL_MIGRATIONS=skip: serve only checks the schema
	UserCheckURL     string // "": approve everyone, with a warning
	AdminToken       string // "": admin API disabled
	LockTTL          time.Duration
	UserCheckTimeout time.Duration
	LockWait         time.Duration
	// Waiting rooms (docs/API.md "Waiting room").
	AdmissionTTL        time.Duration
	AdmissionRate       float64
	RoomMaxPlaces       int
	RoomMaxHeld         int           // queue/mine requests held at once; 0: none
	AdmissionIdle       time.Duration // 0: admissions last AdmissionTTL
	QueueMax            int
	QueueMaxTotal       int
	KeyPrefix           string
	RateGlobal          float64 // requests/s for the whole service; 0: no limit
	RatePerUser         float64 // purchase attempts/s per X-User-ID; 0: no limit
	RatePerUserReads    float64 // other buyer requests/s per X-User-ID (default 20); 0: no limit
	RateJoinsPerAddress float64 // waiting-room joins/s per client address; 0: no limit
	LogLevel            slog.Level
	LogFormat           string // "json" or "text"
	ShutdownTimeout     time.Duration
	BooksSweep          time.Duration // 0: no books sweep
	// Tracing: the OTEL_* variables ask for spans (tracing.Enabled). Off,
	// no span is started, and the caller's trace context is still carried.
	Tracing bool

	// Payments (docs/API.md "Payments and expiry"); PaymentURL "": off.
	PaymentURL    string
	PaymentWindow time.Duration
	PaymentSecret string // never logged
	// PaymentMerchantID is this service's merchant at the provider: a paid
	// answer must name it. "": not checked, with a warning.
	PaymentMerchantID string
	PaymentAPIKey     string // sent to the provider; never logged
	// PaymentAllowHTTP lets PaymentURL be plain http on a host that is not
	// loopback (a provider reached through a trusted sidecar).
	PaymentAllowHTTP bool

	// Secrets of the edge's optional checks (strict.go); never logged.
	PaymentSecretPrevious string // also accepted on callbacks: a rotation
	IdentitySecret        string // "": X-User-ID is trusted unsigned
	// IdentityLegacy: the legacy identity signature (no version header) is
	// accepted beside versions 3 and 2 (SECKILL_IDENTITY_LEGACY; default: not
	// Strict).
	IdentityLegacy bool
	// TrustedGateway: SECKILL_IDENTITY=trusted-gateway, X-User-ID trusted
	// unsigned on purpose, which Strict requires on a listener that is not
	// loopback without SECKILL_IDENTITY_SECRET.
	TrustedGateway bool

	// Strict (SECKILL_STRICT, default true): the secure defaults
	// (strict.go).
	Strict bool
	// ApproveAll: SECKILL_USERCHECK=approve-all, every buyer approved on
	// purpose, which Strict requires to run without SECKILL_USERCHECK_URL.
	ApproveAll bool
	// PaymentRequireTimestamp refuses callbacks signed over the body alone
	// (SECKILL_PAYMENT_REQUIRE_TIMESTAMP; default: Strict).
	PaymentRequireTimestamp bool

	// set are the settings set in the environment (not left to their
	// default).
	set map[string]bool
	// Order events (events.go).
	Events             eventsConfig
	EventsRetention    time.Duration
	EventsStreamMaxLen int
}

// embedded reports whether both stores run inside the process: a throwaway
// demo that nobody else can reach.
func (c config) embedded() bool { return c.RedisURL == "" && c.MySQLDSN == "" }

// loadConfig reads the configuration through the table of settings
// (settingsTable) and refuses values that cannot work, naming every bad
// variable at once so a deploy fails with one clear message.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{Tracing: tracing.Enabled(getenv)}
	e := &envReader{get: getenv}
	c.readSettings(e)
	for _, rule := range configRules {
		if err := rule(c); err != nil {
			e.fail(err)
		}
	}
	// The purchase path's rules between settings (a call shorter than the
	// lease, a WAIT inside its write reserve) are its own: checked there,
	// once the settings themselves read well.
	if len(e.errs) == 0 {
		if err := c.core().Check(); err != nil {
			e.fail(err)
		}
		if err := c.kafkaOptions(); err != nil {
			e.fail(err)
		}
	}
	if err := errors.Join(e.errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// envReader reads settings, collecting what is wrong with them.
type envReader struct {
	get  func(string) string
	errs []error
}

func (e *envReader) fail(err error) { e.errs = append(e.errs, err) }

// configRules are the rules between settings, each refusing a
// configuration that cannot work whatever SECKILL_STRICT says.
var configRules = []func(c config) error{
	func(c config) error {
		if c.RedisURL == "" && c.RedisMode != redisSingle {
			return fmt.Errorf("SECKILL_REDIS_MODE=%q needs SECKILL_REDIS_URL: the embedded Redis is a single node", c.RedisMode)
		}
		return nil
	},
	func(c config) error {
		if c.PaymentURL != "" && c.PaymentSecret == "" {
			return errors.New("SECKILL_PAYMENT_SECRET is required when SECKILL_PAYMENT_URL is set: callbacks are signed with it")
		}
		return nil
	},
	func(c config) error {
		if c.PaymentURL == "" {
			return nil
		}
		return checkPaymentURL(c.PaymentURL, c.PaymentAllowHTTP)
	},
	func(c config) error {
		if c.PaymentSecretPrevious != "" && c.PaymentSecret == "" {
			return errors.New("SECKILL_PAYMENT_SECRET_PREVIOUS is set without SECKILL_PAYMENT_SECRET: during a rotation both are set, the new one in SECKILL_PAYMENT_SECRET")
		}
		return nil
	},
	func(c config) error {
		if c.Events.Sink == eventsKafka && len(c.Events.KafkaBrokers) == 0 {
			return errors.New("SECKILL_EVENTS=kafka needs SECKILL_EVENTS_KAFKA_BROKERS (host:port, comma-separated)")
		}
		return nil
	},
	checkKafkaSecurity,
}

// core is the settings of the service's core (internal/app): the key
// space and the lock's lease built once here, for every part that names
// keys or takes the lock.
func (c config) core() app.Config {
	cc := app.Config{
		Keys:  keys.NewSpace(c.KeyPrefix),
		Lease: lock.Policy{TTL: c.LockTTL, Wait: c.LockWait, CallTimeout: c.UserCheckTimeout},
		Purchase: purchase.Config{
			QueueMax:      c.QueueMax,
			QueueMaxTotal: c.QueueMaxTotal,
			WaitReplicas:  c.WaitReplicas,
			WaitTimeout:   c.WaitTimeout,
		},
		Books: books.Config{
			BooksSweep:   c.BooksSweep,
			RequirePrice: c.requirePrice(),
			// Expiries give units back until the last order's pay_by.
			BooksAfterEnd: c.PaymentWindow + time.Hour,
		},
		Rooms: &waitingroom.Config{
			AdmissionTTL:  c.AdmissionTTL,
			MaxRate:       c.AdmissionRate,
			MaxPlaces:     int64(c.RoomMaxPlaces),
			MaxHeld:       heldCap(c.RoomMaxHeld),
			AdmissionIdle: c.AdmissionIdle,
			Payments:      c.PaymentURL != "" || c.embedded(),
		},
	}
	return cc
}

// userBurstSeconds is how many seconds' worth of the per-user rate a user
// may spend at once: 200 attempts at the default rate, so even two rounds of
// 100 concurrent purchases by one user back to back stay under it.
const userBurstSeconds = 4

// maxWaitReplicas bounds SECKILL_REDIS_WAIT_REPLICAS: more replicas than
// any deployment runs is a typo.
const maxWaitReplicas = 16

// maxQueueMax bounds SECKILL_QUEUE_MAX and SECKILL_QUEUE_MAX_TOTAL: a
// larger number is a typo, not a plan (each waiting buyer holds a request
// and its goroutine).
const maxQueueMax = 1_000_000

// minSecretLen is the shortest admin token accepted under the secure
// defaults: 16 random bytes cannot be guessed online.
const minSecretLen = 16

// checkPaymentURL refuses a provider URL that does not parse, and a plain
// http one on a host that is not loopback unless allowHTTP: the provider's
// answer decides whether an order is paid, and its query carries the API
// key, so on the network it goes over TLS. Loopback stays allowed for a
// provider stub on the same machine (the tests, the acceptance suite). Its
// errors show the URL's scheme, host and path only (outbound.Loggable).
func checkPaymentURL(raw string, allowHTTP bool) error {
	u, err := outbound.ParseBase(raw)
	if err != nil {
		return fmt.Errorf("SECKILL_PAYMENT_URL: %w", err)
	}
	if u.Scheme == "https" || allowHTTP || isLoopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("SECKILL_PAYMENT_URL=%q: the payment provider must be https:// (plain http only on a loopback host, or with SECKILL_PAYMENT_ALLOW_HTTP=true for a provider reached through a trusted sidecar)", outbound.Loggable(u))
}

// The values of SECKILL_MIGRATIONS.
const (
	migrationsApply = "apply"
	migrationsSkip  = "skip"
)

// mysqlDSNForm is the form of SECKILL_MYSQL_DSN, for messages.
const mysqlDSNForm = "user:pass@tcp(host:3306)/db?parseTime=true"

// checkMySQLDSN refuses a DSN (the variable name's value) the MySQL driver cannot read, saying what it
// should look like: a URL (mysql://...) is the usual mistake, and the
// driver's own words for it ("default addr for network ... unknown") do not
// say so. The DSN itself is never shown: it holds the password.
func checkMySQLDSN(name, dsn string) error {
	if strings.HasPrefix(dsn, order.SQLitePrefix) {
		return nil
	}
	if strings.Contains(dsn, "://") {
		return fmt.Errorf("%s: a URL (scheme://) is not a MySQL DSN: write %s (the go-sql-driver/mysql form)", name, mysqlDSNForm)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err == nil {
		_, err = mysql.NewConnector(cfg)
	}
	if err != nil {
		return fmt.Errorf("%s: not a MySQL DSN: write %s: %w", name, mysqlDSNForm, err)
	}
	if err := order.CheckCharset(dsn); err != nil {
		return fmt.Errorf("%s: %w (drop the parameter, or set charset=utf8mb4)", name, err)
	}
	return nil
}

// checkListenAddr refuses a listen address that is not host:port, and for
// a bare port ("8080") says to write ":8080".
func checkListenAddr(name, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return nil
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return fmt.Errorf("%s=%q: a port alone is not an address: write %q to listen on port %s on every interface, or \"127.0.0.1:%s\" for this machine only", name, addr, ":"+addr, addr, addr)
	}
	return fmt.Errorf("%s=%q: not host:port, such as :8080 or 127.0.0.1:8080", name, addr)
}

// isLoopbackHost reports whether host (a URL's Hostname) is this machine:
// localhost, 127.0.0.0/8 or ::1. No name is resolved.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func envOr(getenv func(string) string, name, def string) string {
	if v := strings.TrimSpace(getenv(name)); v != "" {
		return v
	}
	return def
}

// loopbackURL reports whether a URL's host is this machine.
func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && isLoopbackHost(u.Hostname())
}

// heldCap is SECKILL_ROOM_MAX_HELD as the rooms read it: 0 there is the
// default, so none held is below 0.
func heldCap(n int) int64 {
	if n == 0 {
		return -1
	}
	return int64(n)
}

// checkMode holds serve and demo to their stores: serve never falls back to
// the in-process ones, and the demo, which approves every user, prints an
// admin token and serves an unauthenticated payment stub, listens on
// loopback only (127.0.0.1:8080 unless SECKILL_HTTP_ADDR names another
// loopback address), and so does its admin listener (SECKILL_ADMIN_ADDR),
// which serves the ops API, /metrics and pprof.
func checkMode(cfg *config, demo, addrSet bool) error {
	// Both stores or neither: Redis without the database would write orders
	// to a throwaway file and reuse their ids over Redis's keys after a
	// restart; the database without Redis would sell from a stock that
	// vanishes on exit.
	switch {
	case cfg.RedisURL != "" && cfg.MySQLDSN == "":
		return errors.New("SECKILL_MYSQL_DSN is required when SECKILL_REDIS_URL is set: orders must go to the database that outlives the process")
	case cfg.MySQLDSN != "" && cfg.RedisURL == "":
		return errors.New("SECKILL_REDIS_URL is required when SECKILL_MYSQL_DSN is set: the stock must live in a Redis every instance shares")
	}
	switch {
	case !demo && cfg.embedded():
		return errors.New("serve needs SECKILL_REDIS_URL and SECKILL_MYSQL_DSN, and both are unset; for the in-process demo run `seckill demo`")
	case !demo:
		return nil
	case !cfg.embedded():
		return errors.New("demo runs on in-process stores only: unset SECKILL_REDIS_URL and SECKILL_MYSQL_DSN, or run `seckill serve`")
	}
	if cfg.AdminAddr != "" && !loopbackAddr(cfg.AdminAddr) {
		return fmt.Errorf("SECKILL_ADMIN_ADDR=%q: the demo listens on a loopback address only (such as 127.0.0.1:9091): its admin token is printed and its ops API, /metrics and pprof must not be reachable from the network", cfg.AdminAddr)
	}
	if !addrSet {
		cfg.HTTPAddr = demoAddr
		return nil
	}
	if !loopbackAddr(cfg.HTTPAddr) {
		return fmt.Errorf("SECKILL_HTTP_ADDR=%q: the demo listens on a loopback address only (such as 127.0.0.1:8080): it approves every user and serves an unauthenticated payment stub", cfg.HTTPAddr)
	}
	return nil
}

// loopbackAddr reports whether a listen address (host:port) is on loopback
// only; an empty host is every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackHost(host)
}
