// Package wiring builds the purchase path and the books side over the same
// stores and catalog, as cmd/seckill wires them, for tests that buy and
// keep the books in one process.
package wiring

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

type (
	sales  = purchase.Service
	ledger = books.Service
)

// Service is both sides: every method of *purchase.Service and of
// *books.Service.
type Service struct {
	*sales
	*ledger
}

// Close stops the books' sweep, then the purchase path.
func (s Service) Close() error { return errors.Join(s.ledger.Close(), s.sales.Close()) }

// New builds both over deps (a catalog of their own when deps has none).
// bcfg's lock settings, key prefix and clock are cfg's.
func New(cfg purchase.Config, bcfg books.Config, deps purchase.Deps) (Service, error) {
	if deps.Catalog == nil && deps.Orders != nil {
		deps.Catalog = catalog.New(deps.Orders, cfg.Now)
	}
	p, err := purchase.New(cfg, deps)
	if err != nil {
		return Service{}, err
	}
	bcfg.LockTTL, bcfg.LockWait, bcfg.KeyPrefix, bcfg.Now = cfg.LockTTL, cfg.LockWait, cfg.KeyPrefix, cfg.Now
	bdeps := books.Deps{Locks: deps.Locks, Stock: deps.Stock, Orders: deps.Orders, Catalog: deps.Catalog,
		Sales: p, Logger: deps.Logger, Registry: deps.Registry}
	if rooms, ok := deps.Rooms.(books.Rooms); ok {
		bdeps.Rooms = rooms // the waiting rooms (internal/waitingroom) serve both sides
	}
	b, err := books.New(bcfg, bdeps)
	if err != nil {
		return Service{}, errors.Join(err, p.Close())
	}
	return Service{p, b}, nil
}

// OnReal builds both on rdb and the MariaDB database at dsn (approve-all
// users when users is nil), their metrics in reg (nil: a registry of their
// own); all is closed when t ends. It returns the order store too, for the
// test's own reads.
func OnReal(t testing.TB, rdb redis.UniversalClient, dsn string, cfg purchase.Config, bcfg books.Config, users usercheck.Verifier, reg prometheus.Registerer) (Service, *order.Store) {
	t.Helper()
	orders, err := order.Open(context.Background(), dsn, order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	if users == nil {
		users = usercheck.ApproveAll{}
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	svc, err := New(cfg, bcfg, purchase.Deps{Locks: locks, Stock: stock.New(rdb, cfg.KeyPrefix), Orders: orders,
		Users: users, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc, orders
}
