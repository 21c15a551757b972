// Package books keeps an activity's books: it creates activities and loads
// their stock, audits and reconciles them (Redis's stock against the units
// the database sold), changes their total, price and waiting room, lists
// them for operators, and sweeps the open ones to repair what a crash left
// off. Every change of Redis's stock happens under the activity's lock with
// a fence claimed in the database, and lands only while the lock is held:
// the purchase path (internal/purchase) never sees a load race its deducts.
//
// Files: activities.go (create, preload, views, audit), reconcile.go (the
// lock, the fence and the load), adjust.go (total stock), price.go,
// rooms.go (waiting rooms on and off), listings.go (admin listings),
// sweep.go (the books' repair without a command), metrics.go.
package books

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/promreg"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Config tunes the books side.
type Config struct {
	// Lease is the per-activity lock's policy, the purchase path's
	// (purchase.Config.Lease): a change of the books waits up to two leases
	// plus a purchase's wait for purchases to let go.
	Lease lock.Policy
	// BooksSweep, when above 0, is how often this process checks the books of
	// open activities and repairs Redis's stock where a crash left it off
	// (sweep.go); 0 means no sweep.
	BooksSweep time.Duration
	// BooksAfterEnd is how long after an activity's end its books are still
	// swept: expiries give units back until the last order's pay_by.
	BooksAfterEnd time.Duration
	// RequirePrice refuses an activity without a price, at creation and
	// when its price is removed (SECKILL_STRICT with payments on): a
	// payment cannot prove an unpriced order paid.
	RequirePrice bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Sales is the purchase path as the books side meets it: a load of the
// stock ends or resumes the activity's sale in this process's memory.
// *purchase.Service implements it.
type Sales interface {
	// SoldOutEpoch is read before a look-up of the stock that is then
	// loaded: a unit given back meanwhile must not be marked sold out.
	SoldOutEpoch(activityID int64) uint64
	// StockLoaded tells that remaining units were loaded.
	StockLoaded(activityID, remaining int64, epoch uint64)
	// SaleStopped tells that ops paused the sale (paused) or resumed it.
	SaleStopped(activityID int64, paused bool)
}

// Rooms are the waiting rooms as the books side meets them
// (internal/waitingroom).
type Rooms interface {
	// Open writes the activity's room to Redis (turned on); Shut turns it off.
	Open(ctx context.Context, a seckill.Activity) error
	Shut(ctx context.Context, activityID int64) error
	// Sizes returns the places not yet admitted and the admissions open.
	Sizes(ctx context.Context, activityID int64) (waiting, admitted int64, err error)
	// Restore writes the activity's room to Redis again if Redis lost it,
	// and reports whether it did.
	Restore(ctx context.Context, a seckill.Activity) (bool, error)
}

// Deps are the books side's dependencies.
type Deps struct {
	Locks    *lock.Client
	Stock    *stock.Store
	Orders   *order.Store
	Catalog  *catalog.Catalog
	Sales    Sales
	Rooms    Rooms                 // nil: no waiting rooms
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: no metrics
}

// Service keeps the books. It is safe for concurrent use. Close stops its
// sweep.
type Service struct {
	cfg     Config
	now     func() time.Time
	locks   *lock.Client
	stock   *stock.Store
	orders  *order.Store
	catalog *catalog.Catalog
	sales   Sales
	rooms   Rooms
	log     *slog.Logger
	m       metrics

	stop      chan struct{}
	closeOnce sync.Once
	sweeping  sync.WaitGroup
}

// New checks cfg and returns a Service, with its sweep running when
// cfg.BooksSweep is set.
func New(cfg Config, deps Deps) (*Service, error) {
	if cfg.Lease.TTL <= 0 || cfg.Lease.Wait < 0 {
		return nil, fmt.Errorf("books: lock TTL %v must be positive and lock wait %v not negative", cfg.Lease.TTL, cfg.Lease.Wait)
	}
	cfg.Lease = cfg.Lease.WithDefaults()
	if deps.Locks == nil || deps.Stock == nil || deps.Orders == nil || deps.Catalog == nil || deps.Sales == nil {
		return nil, errors.New("books: Locks, Stock, Orders, Catalog and Sales are required")
	}
	s := &Service{cfg: cfg, now: cfg.Now, locks: deps.Locks, stock: deps.Stock, orders: deps.Orders,
		catalog: deps.Catalog, sales: deps.Sales, rooms: deps.Rooms, log: deps.Logger, stop: make(chan struct{})}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.rooms == nil {
		s.rooms = noRooms{}
	}
	s.m = newMetrics(promreg.NewRegistrar(deps.Registry, s.log))
	if cfg.BooksSweep > 0 {
		s.sweeping.Add(1)
		go s.sweepBooks()
	}
	return s, nil
}

// Close stops the sweep and waits for it. It is safe to call more than once.
func (s *Service) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	s.sweeping.Wait()
	return nil
}

// noRooms is Rooms when the service has none.
type noRooms struct{}

func (noRooms) Open(context.Context, seckill.Activity) error       { return nil }
func (noRooms) Shut(context.Context, int64) error                  { return nil }
func (noRooms) Sizes(context.Context, int64) (int64, int64, error) { return 0, 0, nil }
func (noRooms) Restore(context.Context, seckill.Activity) (bool, error) {
	return false, nil
}

// lockPoll caps the pause between attempts on the activity's lock: a
// purchase batch keeps it for milliseconds.
const lockPoll = 5 * time.Millisecond
