package main

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// config is the few service variables the naive server reads, with their
// meaning in docs/API.md.
type config struct {
	httpAddr     string // SECKILL_HTTP_ADDR; default 127.0.0.1:8080
	redisURL     string // SECKILL_REDIS_URL
	redisMode    string // SECKILL_REDIS_MODE: single (default) or cluster
	mysqlDSN     string // SECKILL_MYSQL_DSN
	userCheckURL string // SECKILL_USERCHECK_URL
	adminToken   string // SECKILL_ADMIN_TOKEN; "": admin API disabled
	keyPrefix    string // SECKILL_KEY_PREFIX
	// The service's lock (SECKILL_LOCK_TTL) only takes part in what the
	// service does besides the purchase; the seed's handler has its own.
	lockTTL          time.Duration
	userCheckTimeout time.Duration // SECKILL_USERCHECK_TIMEOUT
	logLevel         slog.Level    // SECKILL_LOG_LEVEL; default info
}

// loadConfig reads the configuration from getenv. The stores, the
// verification and both durations have no default: run.sh sets them all.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		httpAddr:     getenv("SECKILL_HTTP_ADDR"),
		redisURL:     getenv("SECKILL_REDIS_URL"),
		redisMode:    getenv("SECKILL_REDIS_MODE"),
		mysqlDSN:     getenv("SECKILL_MYSQL_DSN"),
		userCheckURL: getenv("SECKILL_USERCHECK_URL"),
		adminToken:   getenv("SECKILL_ADMIN_TOKEN"),
		keyPrefix:    getenv("SECKILL_KEY_PREFIX"),
	}
	if c.httpAddr == "" {
		c.httpAddr = "127.0.0.1:8080"
	}
	var missing []string
	for name, v := range map[string]string{"SECKILL_REDIS_URL": c.redisURL, "SECKILL_MYSQL_DSN": c.mysqlDSN, "SECKILL_USERCHECK_URL": c.userCheckURL} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return c, fmt.Errorf("%s unset: the seed's handler sells from Redis, writes to MySQL/MariaDB and verifies every buyer", strings.Join(missing, ", "))
	}
	var err error
	if c.lockTTL, err = duration(getenv, "SECKILL_LOCK_TTL"); err != nil {
		return c, err
	}
	if c.userCheckTimeout, err = duration(getenv, "SECKILL_USERCHECK_TIMEOUT"); err != nil {
		return c, err
	}
	if lvl := getenv("SECKILL_LOG_LEVEL"); lvl != "" {
		if err := c.logLevel.UnmarshalText([]byte(lvl)); err != nil {
			return c, fmt.Errorf("SECKILL_LOG_LEVEL: %w", err)
		}
	}
	return c, nil
}

// duration reads the positive Go duration of the variable name.
func duration(getenv func(string) string, name string) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return 0, errors.New(name + " unset: the naive server has no defaults")
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s=%s: must be positive", name, v)
	}
	return d, nil
}
