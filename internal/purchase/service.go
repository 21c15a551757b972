// Package purchase is the purchase path of a flash sale; internal/books
// keeps the books it sells from (create, preload, audit, reconcile).
//
// Buyers of an activity queue in this process for a batched lock grant
// instead of bouncing on a busy lock: one leader per activity takes the
// activity's lease lock once for everyone who queued while the previous
// batch ran, verifies them in parallel within a deadline shorter than the
// lease, deducts the batch's units in Redis in one atomic step under the
// grant's fence, writes all their orders in one database transaction that
// checks that fence (shared with other activities' batches writing at the
// same time: order.Committer), releases, and answers each buyer. The lock orders the
// writers and sheds load from the verification service; what keeps the count
// right is the atomic deduct in Redis and, behind it, the database refusing a
// stale fence or a unit past the total. Every unit deducted either gets its
// order written or goes back, and goes back only when its order is known not
// to exist.
//
// Files, in the order a purchase meets them:
//   - buy.go: a buyer's side (queueing, waiting);
//   - precedence.go: the refusals before the queue, walked in the order of
//     seckill.Precedence (rooms.go: the admission; paused.go: the pause);
//   - inflight.go: one purchase in flight per buyer, its repeats waiting;
//   - queue.go: the per-activity queues and their leaders;
//   - batch.go: the batch, and seller.run, what one lock grant does: a
//     pipeline of steps (holders, window, lock, verification, deduct,
//     write, settle), each taking the buyers still in play and returning
//     those that go on with the answers it gave;
//   - tenure.go: the grant (lock, lease, fence) and the tenure kept across
//     batches;
//   - sell.go: the deduct, the orders' write and each buyer's answer;
//   - settle.go: units that go back, and the resolver of commits of unknown
//     outcome; unknown.go: such a batch resolved again by a buyer's retry;
//   - holders.go, writesinflight.go, membership.go (the buyer sets' shared
//     round trips): already_purchased before any final "no";
//   - replicas.go: the WAIT for Redis replicas; rejected.go: the verifier's
//     reason shown to a rejected buyer.
//
// The caches, each in its own file with its whole API: soldout.go (the
// sold-out marks, and the hook through which the books side's loads move
// them), bought.go (this process's orders), rejectedmem.go (buyers the user
// check just rejected); the activities are internal/catalog's. metrics.go:
// the package's metrics.
package purchase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/promreg"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Defaults of Config's zero values.
const (
	// DefaultQueueMax is how many buyers one activity's queue holds in one
	// process.
	DefaultQueueMax = 10_000
	// DefaultQueueMaxTotal is how many buyers all activities' queues hold
	// together in one process: a bound on the memory and goroutines that
	// buyers waiting can take, however many activities are on sale.
	DefaultQueueMaxTotal = 20_000
)

// maxBatch caps the buyers one lock grant serves: the verification calls it
// makes at once and the rows of one insert.
const maxBatch = 256

// Config tunes the purchase path.
type Config struct {
	// Lease is the per-activity lock's policy, shared with the books side:
	// its TTL; its Wait, how long a buyer waits in the activity's queue
	// before a batch takes it and how long a batch waits for the lock held
	// by another process (past either the buyer is told 429 busy); its
	// CallTimeout, the deadline of one verification call, shorter than the
	// TTL, or the lock expires under its holder and another holder sells
	// the same unit.
	Lease lock.Policy
	// QueueMax is how many buyers of one activity may wait in this process;
	// one more is told 429 busy. 0 means DefaultQueueMax.
	QueueMax int
	// QueueMaxTotal is how many buyers of all activities together may wait
	// in this process; one more is told 429 busy. 0 means
	// DefaultQueueMaxTotal.
	QueueMaxTotal int
	// WaitReplicas, when above 0, makes each batch WAIT for that many
	// Redis replicas to acknowledge its lock grant and then its deduct,
	// within WaitTimeout each; a batch whose write is not on enough replicas
	// sells nothing and its buyers are told 503 (replicas.go).
	WaitReplicas int
	WaitTimeout  time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Deps are the service's dependencies.
type Deps struct {
	Locks    *lock.Client
	Stock    *stock.Store
	Orders   *order.Store
	Catalog  *catalog.Catalog // shared with the books side
	Users    usercheck.Verifier
	Rooms    Rooms                 // nil: no waiting rooms
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: no metrics
}

// lookupTimeout bounds the look-ups a batch makes outside its lease (who
// holds an order, whether the stock is still sold out).
const lookupTimeout = 2 * time.Second

// soldOutRecheck is how long a sold-out mark answers without asking Redis.
const soldOutRecheck = time.Second

// Service runs purchases. It is safe for concurrent
// use. Close stops its queues' leaders.
type Service struct {
	cfg    Config
	now    func() time.Time
	stock  *stock.Store
	orders *order.Store
	rooms  Rooms
	log    *slog.Logger
	m      metrics
	// sell runs the batches; holders finds who holds an order.
	sell    *seller
	holders *holders

	catalog *catalog.Catalog
	// soldOut marks activities whose stock hit zero, with when, so the
	// sold-out storm after the last unit costs no Redis round trip. Cleared
	// when a unit goes back or stock is loaded here; trusted for
	// soldOutRecheck, so a unit returned by another process is sold through
	// this one at most that much later. After that a batch asks Redis once
	// for everyone queued, without the lock.
	soldOut soldOutMarks
	// paused marks activities whose deduct met ops' pause (paused.go).
	paused pausedMarks
	bought boughtMemory
	// rejected remembers buyers the user check rejected, for rejectedFor.
	rejected rejectedMemory
	// inflight holds each buyer's purchase in flight: one queue slot per
	// (activity, user) at most.
	inflight inflights
	tickets  atomic.Int64 // buyers holding a ticket (queued or in a batch), for tests

	// queues holds one queue per activity with buyers waiting or a batch
	// running; each has a leader goroutine, owned by the Service.
	qmu     sync.Mutex
	queues  map[int64]*queue
	queued  int // buyers waiting in all queues
	closing bool
	stop    chan struct{} // closed by Close: leaders drain and exit
	leaders sync.WaitGroup
	// buyers answers whether users are in buyer sets; background runs it.
	buyers     *buyerSet
	background sync.WaitGroup
}

// Check reports everything about cfg that cannot work, naming each setting
// by its configuration variable (docs/API.md "Configuration"): the service's
// configuration is refused with these words at start-up, before any store is
// opened, and New refuses the same Config with them.
func (cfg Config) Check() error {
	var errs []error
	if cfg.Lease.TTL <= 0 {
		errs = append(errs, fmt.Errorf("SECKILL_LOCK_TTL=%v: must be positive", cfg.Lease.TTL))
	}
	// A verification call that may outlive the lease oversells: the lock
	// expires while its holder still waits.
	switch {
	case cfg.Lease.CallTimeout <= 0:
		errs = append(errs, fmt.Errorf("SECKILL_USERCHECK_TIMEOUT=%v: must be positive", cfg.Lease.CallTimeout))
	case cfg.Lease.CallTimeout >= cfg.Lease.TTL:
		errs = append(errs, fmt.Errorf("SECKILL_USERCHECK_TIMEOUT=%v must be shorter than SECKILL_LOCK_TTL=%v", cfg.Lease.CallTimeout, cfg.Lease.TTL))
	}
	if cfg.Lease.Wait < 0 {
		errs = append(errs, fmt.Errorf("SECKILL_LOCK_WAIT=%v: must not be negative", cfg.Lease.Wait))
	}
	if cfg.WaitReplicas < 0 || (cfg.WaitReplicas > 0 && cfg.WaitTimeout <= 0) {
		errs = append(errs, fmt.Errorf("SECKILL_REDIS_WAIT_REPLICAS=%d with SECKILL_REDIS_WAIT_TIMEOUT=%v: want 0 replicas, or a positive timeout", cfg.WaitReplicas, cfg.WaitTimeout))
	}
	// The WAITs of a batch run inside the part of the lease kept back for
	// the write: a longer one would spend the lease the write needs.
	if reserve := lock.WriteReserve(cfg.Lease.TTL); cfg.WaitReplicas > 0 && cfg.WaitTimeout >= reserve {
		errs = append(errs, fmt.Errorf("SECKILL_REDIS_WAIT_TIMEOUT=%v must be shorter than the lease's write reserve, a quarter of SECKILL_LOCK_TTL=%v (%v)", cfg.WaitTimeout, cfg.Lease.TTL, reserve))
	}
	if cfg.QueueMax < 0 || cfg.QueueMaxTotal < 0 {
		errs = append(errs, fmt.Errorf("SECKILL_QUEUE_MAX=%d, SECKILL_QUEUE_MAX_TOTAL=%d: must not be negative", cfg.QueueMax, cfg.QueueMaxTotal))
	}
	return errors.Join(errs...)
}

// checked returns cfg with its defaults filled in, or why it cannot work.
func (cfg Config) checked() (Config, error) {
	if err := cfg.Check(); err != nil {
		return cfg, fmt.Errorf("purchase: %w", err)
	}
	cfg.Lease = cfg.Lease.WithDefaults()
	if cfg.QueueMax == 0 {
		cfg.QueueMax = DefaultQueueMax
	}
	if cfg.QueueMaxTotal == 0 {
		cfg.QueueMaxTotal = DefaultQueueMaxTotal
	}
	return cfg, nil
}

// New checks cfg and returns a Service.
func New(cfg Config, deps Deps) (*Service, error) {
	cfg, err := cfg.checked()
	if err != nil {
		return nil, err
	}
	if deps.Locks == nil || deps.Stock == nil || deps.Orders == nil || deps.Catalog == nil || deps.Users == nil {
		return nil, errors.New("purchase: Locks, Stock, Orders, Catalog and Users are required")
	}
	if deps.Rooms == nil {
		deps.Rooms = noRooms{}
	}
	s := &Service{
		cfg:      cfg,
		now:      cfg.Now,
		stock:    deps.Stock,
		orders:   deps.Orders,
		catalog:  deps.Catalog,
		rejected: newRejectedMemory(),
		rooms:    deps.Rooms,
		log:      deps.Logger,
		queues:   make(map[int64]*queue),
		stop:     make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.m = newMetrics(promreg.NewRegistrar(deps.Registry, s.log))
	s.buyers = newBuyerSet(deps.Stock, s.stop)
	s.holders = &holders{orders: deps.Orders, buyers: s.buyers, bought: &s.bought, log: s.log,
		orderByKey: deps.Orders.Orders.OrderByIdempotencyKey}
	s.sell = &seller{
		cfg: cfg, now: s.now, locks: deps.Locks, stock: deps.Stock, unknowns: deps.Stock.Unknowns(),
		orders: deps.Orders, users: deps.Users, rooms: deps.Rooms, catalog: deps.Catalog,
		holders: s.holders, soldOut: &s.soldOut, paused: &s.paused, bought: &s.bought, rejected: s.rejected,
		log: s.log, m: s.m,
		writes: deps.Orders.Orders.NewCommitter(func(n int, took time.Duration) {
			s.m.groupSize.Observe(float64(n))
			s.m.groupTime.Observe(took.Seconds())
		}),
	}
	s.background.Go(s.buyers.run)
	return s, nil
}

// Close stops taking purchases (they answer 503 unavailable), lets the
// leaders finish the buyers already queued, and waits for them. Each batch is
// bounded by its lease and the detached clean-up after it, so Close returns
// within a few lock TTLs. It is safe to call more than once.
func (s *Service) Close() error {
	s.qmu.Lock()
	if !s.closing {
		s.closing = true
		close(s.stop)
	}
	s.qmu.Unlock()
	s.leaders.Wait()
	s.background.Wait()
	s.sell.writes.Close()
	return nil
}

// Ready reports whether Redis and the database answer.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.stock.Ping(ctx); err != nil {
		return seckill.Unavailable("Redis does not answer", err)
	}
	if err := s.orders.Ping(ctx); err != nil {
		return seckill.Unavailable("the order database does not answer", err)
	}
	return nil
}

// outcomeUnknown: the order write's outcome could not be learned; the order
// may exist, and its unit stays deducted until the books are repaired.
func outcomeUnknown(err error) *seckill.Error {
	return &seckill.Error{Code: seckill.EOutcomeUnknown, RetryAfter: seckill.RetryAfter, Err: err,
		Message: "the order database became unreachable during the order write; your order may exist: GET orders/mine (or a repeat with the same Idempotency-Key) tells"}
}

func soldOut() *seckill.Error {
	return seckill.Errorf(seckill.ESoldOut, "no stock left")
}

func newOrderID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
