//go:build seckill_naive

package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/loadtest/naive"
)

// withNaive puts the seed incident's handler (loadtest/naive) in place of
// the purchase when SECKILL_NAIVE=1, for loadtest/run.sh --naive to show an
// oversell. Only a binary built with -tags seckill_naive has this file; the
// service's own build has naive_off.go. Everything but the purchase stays
// the service's: activities, preload and the audit the load test reads.
func withNaive(getenv func(string) string, svc httpapi.Service, cfg config, b *backend, users usercheck.Verifier, log *slog.Logger) (httpapi.Service, func(), error) {
	if getenv("SECKILL_NAIVE") != "1" {
		return svc, func() {}, nil
	}
	if cfg.BooksSweep > 0 {
		// The sweep reloads Redis's stock to total - sold, and the seed's
		// handler never records what it sold: the sweep would hand its
		// units out again and blur the seed's own oversell.
		return nil, nil, errors.New("SECKILL_NAIVE=1 needs SECKILL_BOOKS_SWEEP=0: the books sweep would reload the stock the seed's handler takes without recording it")
	}
	if cfg.MySQLDSN == "" {
		return nil, nil, errors.New("SECKILL_NAIVE=1 needs SECKILL_MYSQL_DSN: the seed's handler writes to MySQL/MariaDB")
	}
	dsn, err := mysql.ParseDSN(cfg.MySQLDSN)
	if err != nil {
		return nil, nil, fmt.Errorf("SECKILL_MYSQL_DSN: %w", err)
	}
	dsn.Loc = time.UTC
	db, err := sql.Open("mysql", dsn.FormatDSN())
	if err != nil {
		return nil, nil, fmt.Errorf("naive: open the database: %w", err)
	}
	log.Warn("SECKILL_NAIVE=1: purchases run the seed incident's broken handler; this build oversells on purpose")
	seed := &naive.Seed{Redis: b.rdb, DB: db, Users: users, Prefix: cfg.KeyPrefix, LockTTL: cfg.UserCheckTimeout / 10}
	return naiveService{svc, seed}, func() { _ = db.Close() }, nil
}

type naiveService struct {
	httpapi.Service
	seed *naive.Seed
}

func (n naiveService) Buy(ctx context.Context, req seckill.BuyRequest) (seckill.Order, error) {
	id, err := n.seed.Buy(ctx, req.ActivityID, req.UserID)
	switch {
	case err == nil:
		return seckill.Order{ID: id, ActivityID: req.ActivityID, UserID: req.UserID, Status: seckill.OrderStatusCreated, CreatedAt: time.Now().UTC()}, nil
	case errors.Is(err, naive.ErrBusy):
		return seckill.Order{}, &seckill.Error{Code: seckill.EBusy, Message: "busy", RetryAfter: time.Second}
	case errors.Is(err, naive.ErrSoldOut):
		return seckill.Order{}, seckill.Errorf(seckill.ESoldOut, "no stock left")
	case errors.Is(err, naive.ErrRejected):
		return seckill.Order{}, seckill.Errorf(seckill.EUserRejected, "rejected")
	default:
		return seckill.Order{}, &seckill.Error{Code: seckill.EUnavailable, Message: "unavailable", RetryAfter: time.Second, Err: err}
	}
}
