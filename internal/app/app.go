// Package app wires the service's core, the purchase path, the books side
// and the waiting rooms, over one Redis, one order store and one catalog:
// cmd/seckill serves what New builds, and the tests that buy and keep the
// books in one process (internal/testkit/wiring) build it the same way.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// Config is the core's settings. The key space and the lease are built
// once here and handed to every part that names keys or takes the lock.
type Config struct {
	Keys  keys.Space
	Lease lock.Policy
	// Purchase's Lease is Lease; its Now is the books side's clock too.
	Purchase purchase.Config
	// Books' Lease and Now are the purchase path's.
	Books books.Config
	// Rooms, when not nil, turns the waiting rooms on with these settings;
	// their writes wait for the purchase path's Redis replicas.
	Rooms *waitingroom.Config
}

// Deps are the stores and services the core runs on.
type Deps struct {
	Redis    redis.UniversalClient
	Locks    *lock.Client
	Orders   *order.Store
	Users    usercheck.Verifier
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: no metrics
}

// Core is the purchase path and the books side over the same stock,
// catalog and waiting rooms.
type Core struct {
	Stock   *stock.Store
	Catalog *catalog.Catalog
	Rooms   *waitingroom.Room // nil without waiting rooms
	Sales   *purchase.Service
	Books   *books.Service
}

// New builds the core. The rooms ask the purchase path about holders and
// the books about what was sold, and both sides ask the rooms, so the
// rooms are built first and reach the others through c.
func New(cfg Config, deps Deps) (_ *Core, err error) {
	cfg = cfg.withLease()
	c := &Core{Stock: stock.New(deps.Redis, cfg.Keys), Catalog: catalog.New(deps.Orders, cfg.Purchase.Now)}
	pdeps := purchase.Deps{Locks: deps.Locks, Stock: c.Stock, Orders: deps.Orders, Catalog: c.Catalog,
		Users: deps.Users, Logger: deps.Logger, Registry: deps.Registry}
	bdeps := books.Deps{Locks: deps.Locks, Stock: c.Stock, Orders: deps.Orders, Catalog: c.Catalog,
		Logger: deps.Logger, Registry: deps.Registry}
	if cfg.Rooms != nil {
		if c.Rooms, err = c.openRooms(*cfg.Rooms, cfg, deps); err != nil {
			return nil, err
		}
		pdeps.Rooms, bdeps.Rooms = c.Rooms, c.Rooms
	}
	if c.Sales, err = purchase.New(cfg.Purchase, pdeps); err != nil {
		return nil, fmt.Errorf("purchase service: %w", err)
	}
	bdeps.Sales = c.Sales
	if c.Books, err = books.New(cfg.Books, bdeps); err != nil {
		return nil, errors.Join(fmt.Errorf("books: %w", err), c.Sales.Close())
	}
	return c, nil
}

// Check reports everything about cfg that cannot work, naming each setting
// by its configuration variable (purchase.Config.Check): the service checks
// its settings with it before it opens a store.
func (cfg Config) Check() error { return cfg.withLease().Purchase.Check() }

// withLease is cfg with its lease and clock handed to both sides.
func (cfg Config) withLease() Config {
	cfg.Purchase.Lease = cfg.Lease
	cfg.Books.Lease, cfg.Books.Now = cfg.Lease, cfg.Purchase.Now
	return cfg
}

// Close stops the books' sweep, then the purchase path.
func (c *Core) Close() error { return errors.Join(c.Books.Close(), c.Sales.Close()) }

// openRooms builds the waiting rooms over the core's Redis.
func (c *Core) openRooms(rcfg waitingroom.Config, cfg Config, deps Deps) (*waitingroom.Room, error) {
	rooms, err := waitingroom.New(rcfg, waitingroom.Deps{
		Store: waitingroom.NewStore(deps.Redis, cfg.Keys, cfg.Purchase.WaitReplicas, cfg.Purchase.WaitTimeout),
		Activity: func(ctx context.Context, id int64) (seckill.Activity, error) {
			return c.Catalog.Visible(ctx, id)
		},
		Holder: func(ctx context.Context, activityID, userID int64, inBuyers bool) (seckill.Order, bool) {
			return c.Sales.HeldOrder(ctx, activityID, userID, inBuyers)
		},
		Verify: roomVerify(deps.Users),
		Sold: func(ctx context.Context, activityID int64) (held, unpaid, total int64, err error) {
			return c.Books.Sold(ctx, activityID)
		},
		Log:        deps.Logger,
		Registerer: deps.Registry,
	})
	if err != nil {
		return nil, fmt.Errorf("waiting rooms: %w", err)
	}
	return rooms, nil
}

// roomVerify is the rooms' user check: none for approve-all, so a join
// needs no step between its standing and its place (one Redis call).
func roomVerify(users usercheck.Verifier) func(ctx context.Context, userID, activityID int64) error {
	if _, approveAll := users.(usercheck.ApproveAll); approveAll || users == nil {
		return nil
	}
	return users.Verify
}
