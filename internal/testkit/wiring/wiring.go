// Package wiring builds the purchase path and the books side over the same
// stores and catalog, as cmd/seckill wires them, for tests that buy and
// keep the books in one process.
package wiring

import (
	"errors"

	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/purchase"
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
	b, err := books.New(bcfg, books.Deps{Locks: deps.Locks, Stock: deps.Stock, Orders: deps.Orders, Catalog: deps.Catalog,
		Sales: p, Logger: deps.Logger, Registry: deps.Registry})
	if err != nil {
		return Service{}, errors.Join(err, p.Close())
	}
	return Service{p, b}, nil
}
