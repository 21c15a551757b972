// Package payment confirms that flash-sale orders are paid, and gives the
// units of unpaid ones back (docs/API.md "Payments and expiry").
//
// An order is a reservation until paid. One verification asks the payment
// provider what became of the order's payment and moves its status; three
// triggers start it for the same order, concurrently and on several
// instances: the provider's callback, the buyer's result page
// (orders/mine) and the delay queue at the order's pay_by. So that they run
// one at a time, a verification holds the order's lease lock (internal/lock)
// and renews it while it runs, like Redisson's watchdog; the renewal stops
// when the lock is released, whatever the outcome. Every call under the
// lock has a deadline shorter than the lease left, and the status write is
// fenced by the lock's grant in the database, so a verification whose lease
// ran out cannot write behind its successor's back.
//
// The provider's answer is the only truth about a payment: a callback only
// says "ask now", and any failure to get an answer is "unknown", never a
// status. Expiry gives the unit back exactly once: the status change and
// sold - 1 are one transaction, then the unit goes back to Redis with a
// receipt keyed by the order id (stock.ReturnOrder), so a repeat or a lost
// reply adds nothing.
package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Config tunes the payment flow.
type Config struct {
	// ProviderURL is the payment provider's base URL; ignored when
	// Deps.Provider is set.
	ProviderURL string
	// Secret is the HMAC-SHA256 key of callbacks. Required.
	Secret []byte
	// PreviousSecret, when set, is accepted besides Secret: the key being
	// rotated out, while the provider still signs with it.
	PreviousSecret []byte
	// LockTTL is the lease of a per-order lock, renewed while the
	// verification runs. Default 2s.
	LockTTL time.Duration
	// ProviderTimeout bounds one provider query; it is cut shorter when the
	// lease has less left. Default LockTTL/2.
	ProviderTimeout time.Duration
	// MerchantID is this service's merchant at the provider: a paid answer
	// must name it, or the order is refund_required. "": not checked.
	MerchantID string
	// RequirePrice makes a paid answer for an order without a price
	// refund_required (RefundNoPrice), never paid (SECKILL_STRICT).
	RequirePrice bool
	// RequireTimestamp refuses callbacks signed over the body alone: only
	// the timestamped signature, which expires, is accepted
	// (SECKILL_PAYMENT_REQUIRE_TIMESTAMP).
	RequireTimestamp bool
	// APIKey, when set, is sent to the provider with every query
	// (APIKeyHeader), so that no credential need live in ProviderURL. It is
	// never logged.
	APIKey string
	// PollInterval is how often the delay queue looks for due orders.
	// Default 200ms, so a due order waits well under a second.
	PollInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Deps are the payment flow's dependencies.
type Deps struct {
	Redis  redis.UniversalClient
	Locks  *lock.Client
	Stock  *stock.Store
	Orders *order.Store
	// Provider, when set, replaces the HTTP client of Config.ProviderURL.
	Provider Provider
	// OnUnitReturned is told each activity an expired order's unit went back
	// to, so the purchase path can clear its sold-out mark at once. nil: none.
	OnUnitReturned func(activityID int64)
	Logger         *slog.Logger          // nil: discard
	Registry       prometheus.Registerer // nil: no metrics
}

// Defaults of Config.
const (
	DefaultLockTTL      = 2 * time.Second
	DefaultPollInterval = 200 * time.Millisecond
)

// resultPageInterval is how often the result page, and the callbacks, may
// run a verification of one order, across all instances.
const resultPageInterval = time.Second

// Service verifies payments and expires unpaid orders. It is safe for
// concurrent use. Start runs its delay queue; Close stops it.
type Service struct {
	cfg    Config
	now    func() time.Time
	redis  redis.UniversalClient
	locks  *lock.Client
	stock  *stock.Store
	orders *order.Store
	// changeStatus is orders.ChangeStatus; tests stand in a COMMIT whose
	// reply was lost.
	changeStatus func(context.Context, order.StatusChange) error
	provider     Provider
	client       *Client // nil when Deps.Provider was given
	returned     func(activityID int64)
	log          *slog.Logger
	m            *metrics
	counts       queryCounts

	startOnce sync.Once
	stop      context.CancelFunc
	stopped   chan struct{} // closed when the delay queue has stopped; nil before Start
	mu        sync.Mutex    // guards stop and stopped
}

// New checks cfg and returns a Service.
func New(cfg Config, deps Deps) (*Service, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("payment: a callback secret is required")
	}
	if deps.Redis == nil || deps.Locks == nil || deps.Stock == nil || deps.Orders == nil {
		return nil, errors.New("payment: Redis, Locks, Stock and Orders are required")
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.ProviderTimeout <= 0 {
		cfg.ProviderTimeout = cfg.LockTTL / 2
	}
	if cfg.ProviderTimeout >= cfg.LockTTL {
		return nil, fmt.Errorf("payment: provider timeout %v must be shorter than the per-order lease %v", cfg.ProviderTimeout, cfg.LockTTL)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	s := &Service{
		cfg:          cfg,
		now:          cfg.Now,
		redis:        deps.Redis,
		locks:        deps.Locks,
		stock:        deps.Stock,
		orders:       deps.Orders,
		provider:     deps.Provider,
		changeStatus: deps.Orders.Orders.ChangeStatus,
		returned:     deps.OnUnitReturned,
		log:          deps.Logger,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.returned == nil {
		s.returned = func(int64) {}
	}
	s.counts = queryCounts{redis: s.redis, keys: deps.Stock.Keys(), log: s.log}
	s.m = newMetrics(deps.Registry, s.log)
	s.m.r.Collector(newOrdersByStatus(s.orders.Orders.StatusCounts, s.log))
	if s.provider == nil {
		s.client = NewClient(cfg.ProviderURL, cfg.ProviderTimeout, s.log, s.m)
		s.client.apiKey = cfg.APIKey
		s.provider = s.client
	}
	return s, nil
}

// Refresh is the result page's trigger: for a created order it runs the
// verification, at most once a second per order across all instances, and
// returns the order after it. Whatever goes wrong, it returns the order as
// last known: a page view never fails for want of the provider.
func (s *Service) Refresh(ctx context.Context, o seckill.Order) seckill.Order {
	if o.Status != seckill.OrderStatusCreated {
		return o
	}
	first, err := s.redis.SetNX(ctx, s.pollKey(o), 1, resultPageInterval).Result()
	if err != nil || !first {
		return o
	}
	v, err := s.verify(ctx, o, triggerResultPage)
	if err != nil {
		s.log.InfoContext(ctx, "payment: result page verification left the order as it was", "order_id", o.ID, "err", err)
		return o
	}
	return v
}

// Counts returns how many of the activity's orders are expired and how many
// refund_required.
func (s *Service) Counts(ctx context.Context, activityID int64) (expired, refundRequired int64, err error) {
	counts, err := s.orders.Orders.CountByStatus(ctx, activityID)
	if err != nil {
		return 0, 0, seckill.DatabaseDown(err)
	}
	return counts[seckill.OrderStatusExpired], counts[seckill.OrderStatusRefundRequired], nil
}

// lockKey is the order's lock: <prefix>seckill:{act:N}:pay:order:<id>.
func (s *Service) lockKey(o seckill.Order) string {
	return s.stock.Keys().PaymentOrderLock(o.ActivityID, o.ID)
}

// fenceLockKey is the lock key whose own fence counter every order lock of
// the activity shares (<prefix>seckill:{act:N}:pay:fence), so no counter is
// left behind per order; SeedFence takes this key.
func (s *Service) fenceLockKey(activityID int64) string {
	return s.stock.Keys().PaymentFence(activityID)
}

// pollKey marks a result-page or callback verification of the order in the
// last second.
func (s *Service) pollKey(o seckill.Order) string {
	return s.stock.Keys().PaymentPolled(o.ActivityID, o.ID)
}
