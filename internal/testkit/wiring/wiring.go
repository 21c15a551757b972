// Package wiring builds the service's core (internal/app, as cmd/seckill
// wires it) for tests that buy and keep the books in one process.
package wiring

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

type (
	sales  = purchase.Service
	ledger = books.Service
)

// Service is both sides: every method of *purchase.Service and of
// *books.Service, and the core they share (its stock, catalog and rooms).
type Service struct {
	*sales
	*ledger
	Core *app.Core
}

// Close stops the books' sweep, then the purchase path.
func (s Service) Close() error { return s.Core.Close() }

// New builds the core as the service does.
func New(cfg app.Config, deps app.Deps) (Service, error) {
	c, err := app.New(cfg, deps)
	if err != nil {
		return Service{}, err
	}
	return Service{c.Sales, c.Books, c}, nil
}

// OnReal builds the core on rdb and the MariaDB database at dsn
// (approve-all users when users is nil), its metrics in reg (nil: a
// registry of its own); all is closed when t ends. It returns the order
// store too, for the test's own reads.
func OnReal(t testing.TB, rdb redis.UniversalClient, dsn string, cfg app.Config, users usercheck.Verifier, reg prometheus.Registerer) (Service, *order.Store) {
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
	svc, err := New(cfg, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: users, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc, orders
}
