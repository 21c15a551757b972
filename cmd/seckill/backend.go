package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/redismetrics"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/migrations"
)

// backend is the service's core (internal/app) with the stores it runs on.
// serve and reconcile share it, so both take the production code path.
type backend struct {
	log    *slog.Logger
	mini   *miniredis.Miniredis // nil unless Redis is embedded
	rdb    redis.UniversalClient
	dbDir  string // temp dir of the embedded database; "" when external
	dsn    string // SECKILL_MYSQL_DSN; "" when embedded
	orders *order.Store
	locks  *lock.Client
	core   *app.Core
	// stopClock stops the goroutine that moves the embedded Redis's TTLs
	// with real time; nil unless Redis is embedded.
	stopClock func()
}

// openBackend connects to Redis and the database (starting the embedded ones
// where no address is configured), applies pending migrations, and builds the
// purchase service. On error, whatever it opened is closed again.
func openBackend(ctx context.Context, cfg config, users usercheck.Verifier, log *slog.Logger, reg prometheus.Registerer) (_ *backend, err error) {
	b := &backend{log: log, dsn: cfg.MySQLDSN}
	// The MySQL driver reports dropped connections with its own log.Printf
	// lines; route them into the structured log.
	_ = mysql.SetLogger(driverLog{log})
	// go-redis prints its pool and Sentinel lines with the standard
	// logger, as plain text in the JSON log: route them there too.
	redis.SetLogger(redisLog{log})
	defer func() {
		if err != nil {
			b.Close()
		}
	}()

	if err = b.openRedis(ctx, cfg, reg); err != nil {
		return nil, err
	}
	if err = b.openOrders(ctx, cfg, reg); err != nil {
		return nil, err
	}
	b.locks = lock.New(b.rdb, &lock.Options{Observer: lock.NewMetrics(reg, log), Logger: log})
	b.core, err = app.New(cfg.core(), app.Deps{Redis: b.rdb, Locks: b.locks, Orders: b.orders, Users: users, Logger: log, Registry: reg})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// openRedis connects to the configured Redis, or starts the embedded one
// when none is configured, and checks that it answers.
func (b *backend) openRedis(ctx context.Context, cfg config, reg prometheus.Registerer) (err error) {
	topology := cfg.Redis
	if cfg.RedisURL == "" {
		if b.mini, err = miniredis.Run(); err != nil {
			return fmt.Errorf("start embedded Redis: %w", err)
		}
		b.stopClock = runClock(b.mini, clockTick)
		if topology, err = parseRedis(redisSingle, "redis://"+b.mini.Addr()); err != nil {
			return err
		}
		b.log.Warn("SECKILL_REDIS_URL is unset: using an embedded in-process Redis; stock is lost on exit")
	}
	b.rdb = topology.client()
	b.rdb.AddHook(redismetrics.New(reg, b.log))
	// Spans per command only when tracing is on: under the no-op provider
	// the hook would still cost every command its attributes.
	if cfg.Tracing {
		if err := redisotel.InstrumentTracing(b.rdb); err != nil {
			return fmt.Errorf("redis tracing: %w", err)
		}
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = b.rdb.Ping(pingCtx).Err()
	cancel()
	if err != nil {
		return redisError(cfg.RedisURL == "", topology, err)
	}
	b.log.Info("redis", "mode", topology.mode, "servers", topology.addrs(), "wait_replicas", cfg.WaitReplicas)
	return nil
}

// openOrders opens the configured order database, or an embedded SQLite
// one in a temporary directory when none is configured.
func (b *backend) openOrders(ctx context.Context, cfg config, reg prometheus.Registerer) (err error) {
	dsn := cfg.MySQLDSN
	if dsn == "" {
		if b.dbDir, err = os.MkdirTemp("", "seckill-"); err != nil {
			return fmt.Errorf("embedded database: %w", err)
		}
		// A temp dir, not order.DefaultSQLiteFile: the embedded Redis
		// forgets its stock on exit, so the orders go with it.
		dsn = order.SQLitePrefix + filepath.Join(b.dbDir, "seckill.db")
		b.log.Warn("SECKILL_MYSQL_DSN is unset: using an embedded SQLite database; orders are lost on exit")
	}
	// The embedded database is the process's own, new at every start: it is
	// always migrated, whatever SECKILL_MIGRATIONS says.
	skip := cfg.SkipMigrations && cfg.MySQLDSN != ""
	b.orders, err = order.Open(ctx, dsn, order.Options{Registry: reg, Tracing: cfg.Tracing, SkipMigrations: skip})
	if behind := (*migrations.BehindError)(nil); errors.As(err, &behind) {
		return fmt.Errorf("SECKILL_MIGRATIONS=skip and the database's schema is behind (version %d, this binary needs %d): "+
			"run `seckill migrate` first (with SECKILL_MIGRATE_DSN naming a user allowed to change the schema), then start again: %w",
			behind.Current, behind.Latest, err)
	}
	if err != nil {
		return fmt.Errorf("open database: %w", explainDBError(cfg.MySQLDSN, err))
	}
	if err = b.orders.SetMaxConns(cfg.MySQLMaxConns); err != nil {
		return err
	}
	return nil
}

// Close stops the service's background work, then closes the lock client,
// Redis, the database and the embedded stores, in that order: each is still
// there for whatever the one before it does while closing.
func (b *backend) Close() error {
	var errs []error
	if b.core != nil {
		errs = append(errs, b.core.Close())
	}
	if b.locks != nil {
		errs = append(errs, b.locks.Close())
	}
	if b.rdb != nil {
		errs = append(errs, b.rdb.Close())
	}
	if b.orders != nil {
		errs = append(errs, b.orders.Close())
	}
	if b.stopClock != nil {
		b.stopClock()
	}
	if b.mini != nil {
		b.mini.Close()
	}
	if b.dbDir != "" {
		errs = append(errs, os.RemoveAll(b.dbDir)) //nolint:gosec // G703: our own os.MkdirTemp directory, no outside input

	}
	err := errors.Join(errs...)
	if err != nil {
		b.log.Error("close", "err", err)
	}
	return err
}

// driverLog adapts the MySQL driver's logger to slog.
type driverLog struct{ log *slog.Logger }

// Print logs the driver's message as a warning.
func (d driverLog) Print(v ...any) { d.log.Warn("mysql driver", "msg", fmt.Sprint(v...)) }

// clockTick is how often the embedded Redis's TTLs are moved on: keys
// expire at most this late.
const clockTick = 20 * time.Millisecond

// runClock counts the embedded Redis's TTLs down with real time until the
// returned stop is called: miniredis only expires keys when told to
// (FastForward), and without this a lock, a release marker or the "provider
// queried in the last second" mark would live for ever, and a payment
// callback would wait for it in vain. A ticker rather than miniredis's
// ClockTTL, which would sort every key on every command.
func runClock(mr *miniredis.Miniredis, tick time.Duration) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(tick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				mr.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// redisLog adapts go-redis's logger (redis.SetLogger) to slog.
type redisLog struct{ log *slog.Logger }

// Printf logs go-redis's message as a warning.
func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.log.WarnContext(ctx, "redis client", "detail", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// redisError is openRedis's error when Redis does not answer: it names
// SECKILL_REDIS_URL, and when nothing listens at the address, says so.
func redisError(embedded bool, t redisTopology, err error) error {
	switch {
	case embedded:
		return fmt.Errorf("embedded redis (%s) does not answer: %w", t.addrs(), err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("SECKILL_REDIS_URL: nothing answers at %s (connection refused): is Redis running there, and are the host and port right?: %w", t.addrs(), err)
	}
	return fmt.Errorf("SECKILL_REDIS_URL: redis (%s, %s) does not answer: %w", t.mode, t.addrs(), err)
}

// explainDBError names SECKILL_MYSQL_DSN in an error of the database's and
// says what to do when the database it names does not exist or nothing
// answers at its address. dsn "" is the embedded database: err as it is.
func explainDBError(dsn string, err error) error {
	return explainDBErrorOf("SECKILL_MYSQL_DSN", dsn, err)
}

// explainDBErrorOf is explainDBError for the DSN of the variable name.
func explainDBErrorOf(name, dsn string, err error) error {
	if dsn == "" || strings.HasPrefix(dsn, order.SQLitePrefix) {
		return err
	}
	cfg, perr := mysql.ParseDSN(dsn)
	if perr != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == 1049: // ER_BAD_DB_ERROR
		return fmt.Errorf("%s names the database %q, which does not exist at %s: create it (CREATE DATABASE %s) or fix the DSN: %w",
			name, cfg.DBName, cfg.Addr, quoteIdent(cfg.DBName), err)
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1698): // ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR
		return fmt.Errorf("%s: the database at %s refused the user %q or its password: check them with `%s` (or mysql), and fix the DSN's user:password: %w",
			name, cfg.Addr, cfg.User, clientCommand(cfg), err)
	case errors.As(err, &me) && me.Number == 1044: // ER_DBACCESS_DENIED_ERROR
		return fmt.Errorf("%s: the user %q may not use the database %q at %s: grant it (GRANT ALL ON %s.* TO ...) or fix the DSN: %w",
			name, cfg.User, cfg.DBName, cfg.Addr, quoteIdent(cfg.DBName), err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s: nothing answers at %s (connection refused): is MySQL or MariaDB running there, and are the host and port right?: %w", name, cfg.Addr, err)
	}
	return fmt.Errorf("%s (%s): %w", name, cfg.Addr, err)
}

// clientCommand is the mariadb command line that logs in as cfg's user at
// cfg's address, asking for the password.
func clientCommand(cfg *mysql.Config) string {
	if cfg.Net == "unix" {
		return fmt.Sprintf("mariadb -S %s -u %s -p", cfg.Addr, cfg.User)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host, port = cfg.Addr, "3306"
	}
	return fmt.Sprintf("mariadb -h %s -P %s -u %s -p", host, port, cfg.User)
}

// quoteIdent is name as an SQL identifier, back-quoted when it is not
// plain letters, digits and underscores.
func quoteIdent(name string) string {
	for _, r := range name {
		if r != '_' && (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return "`" + strings.ReplaceAll(name, "`", "``") + "`"
		}
	}
	return name
}
