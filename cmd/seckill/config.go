package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
)

// config is the service's configuration, read from the environment names of
// the HTTP contract (docs/API.md "Configuration") plus the extensions the
// README documents.
type config struct {
	HTTPAddr         string
	AdminAddr        string        // "": admin API and /metrics on HTTPAddr, no pprof
	RedisURL         string        // "": embedded in-process store
	RedisMode        string        // single, cluster or sentinel
	Redis            redisTopology // parsed RedisURL; zero when embedded
	WaitReplicas     int           // 0: no WAIT
	WaitTimeout      time.Duration
	MySQLDSN         string // "": embedded SQL database
	MySQLMaxConns    int    // the database pool's size
	UserCheckURL     string // "": approve everyone, with a warning
	AdminToken       string // "": admin API disabled
	LockTTL          time.Duration
	UserCheckTimeout time.Duration
	LockWait         time.Duration
	QueueMax         int
	KeyPrefix        string
	RateGlobal       float64 // requests/s for the whole service; 0: no limit
	RatePerUser      float64 // requests/s per X-User-ID; 0: no limit
	LogLevel         slog.Level
	LogFormat        string // "json" or "text"
	ShutdownTimeout  time.Duration
	BooksSweep       time.Duration // 0: no books sweep

	// Payments (docs/API.md "Payments and expiry"); PaymentURL "": off.
	PaymentURL    string
	PaymentWindow time.Duration
	PaymentSecret string // never logged
}

// embedded reports whether both stores run inside the process: a throwaway
// demo that nobody else can reach.
func (c config) embedded() bool { return c.RedisURL == "" && c.MySQLDSN == "" }

// loadConfig reads the configuration and refuses values that cannot work,
// naming every bad variable at once so a deploy fails with one clear message.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		HTTPAddr:     envOr(getenv, "SECKILL_HTTP_ADDR", ":8080"),
		AdminAddr:    strings.TrimSpace(getenv("SECKILL_ADMIN_ADDR")),
		RedisURL:     getenv("SECKILL_REDIS_URL"),
		MySQLDSN:     getenv("SECKILL_MYSQL_DSN"),
		UserCheckURL: getenv("SECKILL_USERCHECK_URL"),
		AdminToken:   getenv("SECKILL_ADMIN_TOKEN"),
		KeyPrefix:    getenv("SECKILL_KEY_PREFIX"),
		LogFormat:    strings.ToLower(envOr(getenv, "SECKILL_LOG_FORMAT", "json")),
	}
	var errs []error
	duration := func(name, def string, min time.Duration) time.Duration {
		v := envOr(getenv, name, def)
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s=%q: not a duration such as 500ms or 2s", name, v))
		case d < min:
			errs = append(errs, fmt.Errorf("%s=%q: must be at least %v", name, v, min))
		}
		return d
	}
	rate := func(name string) float64 {
		v := envOr(getenv, name, "0")
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || math.IsNaN(r) || r > 1e9 {
			errs = append(errs, fmt.Errorf("%s=%q: must be requests per second, 0 for no limit", name, v))
		}
		return r
	}
	c.LockTTL = duration("SECKILL_LOCK_TTL", "2s", 10*time.Millisecond)
	c.UserCheckTimeout = duration("SECKILL_USERCHECK_TIMEOUT", "500ms", time.Millisecond)
	c.LockWait = duration("SECKILL_LOCK_WAIT", "1s", time.Millisecond)
	c.ShutdownTimeout = duration("SECKILL_SHUTDOWN_TIMEOUT", "15s", 0)
	c.BooksSweep = duration("SECKILL_BOOKS_SWEEP", "5s", 0)
	queueMax := envOr(getenv, "SECKILL_QUEUE_MAX", strconv.Itoa(purchase.DefaultQueueMax))
	if n, err := strconv.Atoi(queueMax); err != nil || n < 1 || n > maxQueueMax {
		errs = append(errs, fmt.Errorf("SECKILL_QUEUE_MAX=%q: must be a whole number of buyers from 1 to %d", queueMax, maxQueueMax))
	} else {
		c.QueueMax = n
	}
	maxConns := envOr(getenv, "SECKILL_MYSQL_MAX_CONNS", strconv.Itoa(order.DefaultMaxConns))
	if n, err := strconv.Atoi(maxConns); err != nil || n < 1 || n > order.MaxPoolConns {
		errs = append(errs, fmt.Errorf("SECKILL_MYSQL_MAX_CONNS=%q: must be a number of connections from 1 to %d", maxConns, order.MaxPoolConns))
	} else {
		c.MySQLMaxConns = n
	}
	c.RedisMode = strings.ToLower(envOr(getenv, "SECKILL_REDIS_MODE", redisSingle))
	switch {
	case c.RedisURL != "":
		var err error
		if c.Redis, err = parseRedis(c.RedisMode, c.RedisURL); err != nil {
			errs = append(errs, err)
		}
	case c.RedisMode != redisSingle:
		errs = append(errs, fmt.Errorf("SECKILL_REDIS_MODE=%q needs SECKILL_REDIS_URL: the embedded Redis is a single node", c.RedisMode))
	}
	// A brace would change the hash tag {act:N} that keeps each activity's
	// keys in one Cluster slot: Redis hashes the first {...} of a key.
	if strings.ContainsAny(c.KeyPrefix, "{}") {
		errs = append(errs, fmt.Errorf("SECKILL_KEY_PREFIX=%q: must not contain { or }: it would move activities' keys to other Cluster slots", c.KeyPrefix))
	}
	waitReplicas := envOr(getenv, "SECKILL_REDIS_WAIT_REPLICAS", "0")
	if n, err := strconv.Atoi(waitReplicas); err != nil || n < 0 || n > maxWaitReplicas {
		errs = append(errs, fmt.Errorf("SECKILL_REDIS_WAIT_REPLICAS=%q: must be a number of replicas from 0 (no WAIT) to %d", waitReplicas, maxWaitReplicas))
	} else {
		c.WaitReplicas = n
	}
	c.WaitTimeout = duration("SECKILL_REDIS_WAIT_TIMEOUT", "100ms", time.Millisecond)
	c.RateGlobal = rate("SECKILL_RATE_GLOBAL")
	c.RatePerUser = rate("SECKILL_RATE_PER_USER")

	// A verification call that may outlive the lease is the seed's oversell:
	// the lock expires while its holder still waits.
	if c.LockTTL > 0 && c.UserCheckTimeout >= c.LockTTL {
		errs = append(errs, fmt.Errorf("SECKILL_USERCHECK_TIMEOUT=%v must be shorter than SECKILL_LOCK_TTL=%v", c.UserCheckTimeout, c.LockTTL))
	}
	// The WAITs come out of the lease's write reserve.
	if c.WaitReplicas > 0 && c.LockTTL > 0 && c.WaitTimeout >= c.LockTTL/4 {
		errs = append(errs, fmt.Errorf("SECKILL_REDIS_WAIT_TIMEOUT=%v must be shorter than a quarter of SECKILL_LOCK_TTL=%v", c.WaitTimeout, c.LockTTL))
	}
	if v := envOr(getenv, "SECKILL_LOG_LEVEL", "info"); c.LogLevel.UnmarshalText([]byte(v)) != nil {
		errs = append(errs, fmt.Errorf("SECKILL_LOG_LEVEL=%q: must be debug, info, warn or error", v))
	}
	c.PaymentURL, c.PaymentSecret = getenv("SECKILL_PAYMENT_URL"), getenv("SECKILL_PAYMENT_SECRET")
	c.PaymentWindow = duration("SECKILL_PAYMENT_WINDOW", "15m", time.Second)
	if c.PaymentURL != "" && c.PaymentSecret == "" {
		errs = append(errs, errors.New("SECKILL_PAYMENT_SECRET is required when SECKILL_PAYMENT_URL is set: callbacks are signed with it"))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("SECKILL_LOG_FORMAT=%q: must be json or text", c.LogFormat))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

// maxWaitReplicas bounds SECKILL_REDIS_WAIT_REPLICAS: more replicas than
// any deployment runs is a typo.
const maxWaitReplicas = 16

// maxQueueMax bounds SECKILL_QUEUE_MAX: a queue's buffer is allocated whole.
const maxQueueMax = 1_000_000

func envOr(getenv func(string) string, name, def string) string {
	if v := strings.TrimSpace(getenv(name)); v != "" {
		return v
	}
	return def
}

// checkMode holds serve and demo to their stores: serve never falls back to
// the in-process ones, and the demo, which approves every user, prints an
// admin token and serves an unauthenticated payment stub, listens on
// loopback only (127.0.0.1:8080 unless SECKILL_HTTP_ADDR names another
// loopback address).
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
	case !addrSet:
		cfg.HTTPAddr = demoAddr
		return nil
	}
	host, _, err := net.SplitHostPort(cfg.HTTPAddr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fmt.Errorf("SECKILL_HTTP_ADDR=%q: the demo listens on a loopback address only (such as 127.0.0.1:8080): it approves every user and serves an unauthenticated payment stub", cfg.HTTPAddr)
	}
	return nil
}
