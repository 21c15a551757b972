package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// stores are the service's purchase service on Redis and MySQL/MariaDB, and
// the seed's own connection to the database.
type stores struct {
	log     *slog.Logger
	rdb     redis.UniversalClient
	service wiring.Service
	db      *sql.DB // the seed's: it inserts its orders itself
	// closers close what is open, in the order it was opened; Close runs
	// them backwards, so each part outlives whatever was built on it.
	closers []func() error
}

// openStores connects to Redis and the database, applies pending
// migrations, and builds the service without its books sweep. On error,
// whatever it opened is closed again.
func openStores(ctx context.Context, cfg config, users usercheck.Verifier, log *slog.Logger, reg prometheus.Registerer) (_ *stores, err error) {
	s := &stores{log: log}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.rdb, err = redisClient(cfg.redisMode, cfg.redisURL); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.rdb.Close)
	if err = s.rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("SECKILL_REDIS_URL: redis does not answer: %w", err)
	}
	orders, err := order.Open(ctx, cfg.mysqlDSN, order.Options{Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("SECKILL_MYSQL_DSN: %w", err)
	}
	s.closers = append(s.closers, orders.Close)
	if s.db, err = seedDB(cfg.mysqlDSN); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.db.Close)
	locks := lock.New(s.rdb, &lock.Options{Logger: log})
	s.closers = append(s.closers, locks.Close)
	s.service, err = wiring.New(app.Config{Keys: keys.NewSpace(cfg.keyPrefix), Lease: lock.Policy{TTL: cfg.lockTTL, CallTimeout: cfg.userCheckTimeout}}, app.Deps{Redis: s.rdb, Locks: locks, Orders: orders, Users: users, Logger: log, Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("purchase service: %w", err)
	}
	s.closers = append(s.closers, s.service.Close)
	return s, nil
}

// redisClient is the client of SECKILL_REDIS_MODE's topology: the load test
// runs on one Redis or on the loopback Cluster.
func redisClient(mode, rawURL string) (redis.UniversalClient, error) {
	switch mode {
	case "", "single":
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("SECKILL_REDIS_URL: %w", err)
		}
		return redis.NewClient(o), nil
	case "cluster":
		o, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("SECKILL_REDIS_URL: %w", err)
		}
		return redis.NewClusterClient(o), nil
	}
	return nil, fmt.Errorf("SECKILL_REDIS_MODE=%q: the naive server runs on single or cluster", mode)
}

// seedDB is the seed's connection to the orders' database, in UTC as the
// service's is.
func seedDB(rawDSN string) (*sql.DB, error) {
	dsn, err := mysql.ParseDSN(rawDSN)
	if err != nil {
		return nil, fmt.Errorf("SECKILL_MYSQL_DSN: %w", err)
	}
	dsn.Loc = time.UTC
	db, err := sql.Open("mysql", dsn.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("open the seed's database connection: %w", err)
	}
	return db, nil
}

// Close closes the service, then the stores under it.
func (s *stores) Close() {
	var errs []error
	for _, c := range slices.Backward(s.closers) {
		errs = append(errs, c())
	}
	if err := errors.Join(errs...); err != nil {
		s.log.Error("close", "err", err)
	}
}
