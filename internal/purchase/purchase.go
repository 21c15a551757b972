// Package purchase is the purchase path of a flash sale and the operations
// that keep its stock honest (preload, audit, reconcile).
//
// A purchase takes the activity's lease lock, asks the user-verification
// service within a deadline shorter than the lease, deducts one unit
// atomically in Redis and writes the order in one database transaction that
// checks the lock's fence. The lock sheds load from the verification service
// and orders the writers; what keeps the count right is the atomic deduct in
// Redis and, behind it, the database refusing a stale fence or a unit past the
// total. Every step after the deduct either writes the order or puts the unit
// back, and a unit is put back only when the order is known not to exist.
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
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Config tunes the purchase path.
type Config struct {
	// LockTTL is the lease of the per-activity lock.
	LockTTL time.Duration
	// UserCheckTimeout is the deadline of one verification call. It must be
	// shorter than LockTTL: a call that may outlive the lease is how the seed's
	// oversell began.
	UserCheckTimeout time.Duration
	// LockWait is how long a purchase waits for a busy lock; 0 tries once.
	LockWait time.Duration
	// KeyPrefix is put before every Redis key, so several deployments or test
	// runs can share one Redis.
	KeyPrefix string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Deps are the service's dependencies.
type Deps struct {
	Redis    redis.UniversalClient // for readiness
	Locks    *lock.Client
	Stock    *stock.Store
	Orders   *order.Store
	Users    usercheck.Verifier
	Logger   *slog.Logger          // nil: discard
	Registry prometheus.Registerer // nil: no metrics
}

// retryAfter is what busy and unavailable answers tell the client.
const retryAfter = time.Second

// writeReserve is the part of the lease kept back from the verification call
// for the deduct and the order write that follow it.
func writeReserve(ttl time.Duration) time.Duration { return max(ttl/4, 20*time.Millisecond) }

// detachedTimeout bounds the work done after the caller has gone: putting a
// unit back, finding out whether a commit landed.
const detachedTimeout = 2 * time.Second

// soldOutRecheck is how long a sold-out mark answers without asking Redis.
const soldOutRecheck = time.Second

// boughtCap bounds the in-process memory of who bought what.
const boughtCap = 1 << 20

// Service runs purchases and the ops operations. It is safe for concurrent use.
type Service struct {
	cfg    Config
	now    func() time.Time
	redis  redis.UniversalClient
	locks  *lock.Client
	stock  *stock.Store
	orders *order.Store
	users  usercheck.Verifier
	log    *slog.Logger
	m      metrics

	// Activities never change once created, so they are cached for the
	// cheap rejections that must not cost a database round trip.
	activities sync.Map // int64 -> seckill.Activity
	// soldOut marks activities whose stock hit zero, with when, so the
	// sold-out storm after the last unit costs no Redis round trip. Cleared
	// when a unit goes back or stock is loaded here; trusted for
	// soldOutRecheck, so a unit returned by another process is sold through
	// this one at most that much later.
	soldOut sync.Map // int64 -> time.Time
	// gates admit one purchase per activity at a time from this process.
	gates sync.Map // int64 -> gate
	// bought remembers this process's orders, so a buyer who asks again is
	// answered without taking the lock. The database's unique key is the
	// guarantee; this is only a shortcut.
	bought      sync.Map // buyer -> order id
	boughtCount atomic.Int64
}

type buyer struct{ activityID, userID int64 }

// New checks cfg and returns a Service.
func New(cfg Config, deps Deps) (*Service, error) {
	if cfg.LockTTL <= 0 {
		return nil, fmt.Errorf("purchase: lock TTL must be positive, got %v", cfg.LockTTL)
	}
	if cfg.UserCheckTimeout <= 0 || cfg.UserCheckTimeout >= cfg.LockTTL {
		return nil, fmt.Errorf("purchase: user-check timeout %v must be positive and shorter than the lock TTL %v", cfg.UserCheckTimeout, cfg.LockTTL)
	}
	if cfg.LockWait < 0 {
		return nil, fmt.Errorf("purchase: lock wait must not be negative, got %v", cfg.LockWait)
	}
	if deps.Locks == nil || deps.Stock == nil || deps.Orders == nil || deps.Users == nil {
		return nil, errors.New("purchase: Locks, Stock, Orders and Users are required")
	}
	s := &Service{
		cfg:    cfg,
		now:    cfg.Now,
		redis:  deps.Redis,
		locks:  deps.Locks,
		stock:  deps.Stock,
		orders: deps.Orders,
		users:  deps.Users,
		log:    deps.Logger,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(deps.Registry)
	if err != nil {
		return nil, err
	}
	s.m = m
	return s, nil
}

// BuyRequest is one buyer's attempt to buy one unit.
type BuyRequest struct {
	ActivityID int64
	UserID     int64
	// IdempotencyKey, when not empty, makes a repeat by the same user return
	// the first request's order.
	IdempotencyKey string
}

// Buy sells one unit of the activity to the user. It returns the order, or an
// *seckill.Error with the contract's code. Whatever it returns, it never leaves
// a unit deducted without its order unless it could not learn whether the
// order was written; such a unit shows up in the audit and Reconcile returns it.
func (s *Service) Buy(ctx context.Context, req BuyRequest) (seckill.Order, error) {
	if naive != nil {
		return naive(ctx, s, req)
	}
	if req.ActivityID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "activity id must be a positive integer")
	}
	if req.UserID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EUnauthenticated, "user id must be a positive integer")
	}
	a, err := s.activity(ctx, req.ActivityID)
	if err != nil {
		return seckill.Order{}, err
	}
	now := s.now()
	if now.Before(a.StartsAt) {
		return seckill.Order{}, seckill.Errorf(seckill.ENotStarted, "the sale starts at %s", a.StartsAt.UTC().Format(time.RFC3339))
	}
	if !now.Before(a.EndsAt) {
		return seckill.Order{}, seckill.Errorf(seckill.EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
	}
	if req.IdempotencyKey != "" {
		o, err := s.orders.OrderByIdempotencyKey(ctx, req.UserID, req.IdempotencyKey)
		switch {
		case err == nil:
			return s.replay(o, req)
		case !errors.Is(err, order.ErrNotFound):
			return seckill.Order{}, unavailable("the order database did not answer", err)
		}
	}
	if id, ok := s.bought.Load(buyer{req.ActivityID, req.UserID}); ok {
		return seckill.Order{}, alreadyPurchased(id.(string))
	}
	if at, ok := s.soldOut.Load(req.ActivityID); ok && s.now().Sub(at.(time.Time)) < soldOutRecheck {
		return seckill.Order{}, soldOut()
	}

	// One purchase per activity at a time from this process: the others
	// could only find the Redis lock taken, and their round trips would
	// queue in the connection pool ahead of the holder's.
	arrived := time.Now()
	gate := s.gate(req.ActivityID)
	if !gate.enter(ctx, s.cfg.LockWait) {
		return seckill.Order{}, busy(nil)
	}
	defer gate.leave()

	wait := max(s.cfg.LockWait-time.Since(arrived), 0) // what is left of it after the gate
	lk, err := s.locks.Obtain(ctx, stock.LockKey(s.cfg.KeyPrefix, req.ActivityID), s.cfg.LockTTL, &lock.ObtainOptions{Wait: wait})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return seckill.Order{}, unavailable("the request was cancelled before the activity could be locked", err)
	case errors.Is(err, lock.ErrNotObtained):
		return seckill.Order{}, busy(err)
	default:
		return seckill.Order{}, unavailable("Redis did not answer; nothing was sold", err)
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "lock release", "activity_id", req.ActivityID, "fence", lk.Fence(), "err", err)
		}
	}()
	return s.buyHolding(lk, a, req)
}

// buyHolding is the part of a purchase done under the activity's lock. Every
// call it makes is bounded by the lease context, so nothing it starts can
// outlive the lease.
func (s *Service) buyHolding(lk *lock.Lock, a seckill.Activity, req BuyRequest) (seckill.Order, error) {
	lease := lk.Context()
	budget := min(s.cfg.UserCheckTimeout, lk.Remaining()-writeReserve(s.cfg.LockTTL))
	if budget <= 0 {
		return seckill.Order{}, unavailable("the activity's lease ran out before the user could be verified", context.DeadlineExceeded)
	}
	vctx, cancel := context.WithTimeout(lease, budget)
	err := s.users.Verify(vctx, req.UserID, req.ActivityID)
	cancel()
	switch {
	case errors.Is(err, usercheck.ErrRejected):
		return seckill.Order{}, &seckill.Error{Code: seckill.EUserRejected, Message: "the user-verification service does not allow this user to buy", Err: err}
	case err != nil:
		return seckill.Order{}, unavailable("the user-verification service failed or timed out; nothing was sold", err)
	}

	o := seckill.Order{
		ID:             newOrderID(),
		ActivityID:     req.ActivityID,
		UserID:         req.UserID,
		Status:         seckill.OrderStatusCreated,
		IdempotencyKey: req.IdempotencyKey,
		Fence:          lk.Fence(),
		CreatedAt:      s.now().UTC(),
	}
	remaining, err := s.stock.Deduct(lease, req.ActivityID, o.Fence)
	switch {
	case errors.Is(err, stock.ErrSoldOut):
		s.markSoldOut(req.ActivityID, 0)
		return seckill.Order{}, soldOut()
	case errors.Is(err, stock.ErrNotLoaded):
		return seckill.Order{}, unavailable("the activity's stock is not loaded; an operator must preload it", err)
	case err != nil:
		// A deduct whose reply was lost may have landed: its receipt lets
		// the unit go back if it did.
		s.giveBack(lease, o, "deduct_failed")
		return seckill.Order{}, unavailable("the stock store did not answer; nothing was sold", err)
	}
	s.m.remaining.WithLabelValues(itoa(req.ActivityID)).Set(float64(remaining))

	created, err := s.orders.CreateOrder(lease, o)
	if err == nil {
		s.remember(created)
		s.markSoldOut(req.ActivityID, remaining)
		return created, nil
	}
	return s.afterFailedWrite(lease, o, err)
}

// afterFailedWrite decides, for an order write that failed after its unit was
// deducted, what the buyer is told and whether the unit goes back.
func (s *Service) afterFailedWrite(ctx context.Context, o seckill.Order, err error) (seckill.Order, error) {
	switch {
	case errors.Is(err, order.ErrDuplicate):
		s.giveBack(ctx, o, "duplicate")
		dctx, cancel := detached(ctx)
		defer cancel()
		existing, lerr := s.orders.OrderByUser(dctx, o.ActivityID, o.UserID)
		if lerr != nil {
			return seckill.Order{}, &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "this user already holds an order for this activity", Err: err}
		}
		s.remember(existing)
		return seckill.Order{}, alreadyPurchased(existing.ID)
	case errors.Is(err, order.ErrIdempotencyKeyUsed):
		s.giveBack(ctx, o, "idempotency_key_used")
		dctx, cancel := detached(ctx)
		defer cancel()
		first, lerr := s.orders.OrderByIdempotencyKey(dctx, o.UserID, o.IdempotencyKey)
		if lerr != nil {
			return seckill.Order{}, unavailable("the order database did not answer", lerr)
		}
		return s.replay(first, BuyRequest{ActivityID: o.ActivityID, UserID: o.UserID, IdempotencyKey: o.IdempotencyKey})
	case errors.Is(err, order.ErrSoldOut):
		// The database holds every unit already: Redis had one too many.
		// Keeping the unit deducted moves Redis towards the truth.
		s.log.Warn("database refused a unit Redis had; reconcile the activity", "activity_id", o.ActivityID)
		s.markSoldOut(o.ActivityID, 0)
		return seckill.Order{}, soldOut()
	case errors.Is(err, order.ErrStaleFence):
		s.giveBack(ctx, o, "stale_fence")
		return seckill.Order{}, unavailable("the purchase's lease expired before its order was written; nothing was sold", err)
	case errors.Is(err, order.ErrActivityNotFound):
		s.giveBack(ctx, o, "activity_missing")
		return seckill.Order{}, seckill.Errorf(seckill.EActivityNotFound, "no activity %d", o.ActivityID)
	case errors.Is(err, order.ErrCommitUnknown):
		return s.resolveCommit(ctx, o, err)
	default:
		s.giveBack(ctx, o, "write_failed")
		return seckill.Order{}, unavailable("the order database failed; nothing was sold", err)
	}
}

// resolveCommit finds out whether an order whose COMMIT failed exists. The
// unit goes back only when the order is known to be absent: returning it for
// an order that did commit would sell it twice.
func (s *Service) resolveCommit(ctx context.Context, o seckill.Order, cause error) (seckill.Order, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	var lerr error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		var got seckill.Order
		got, lerr = s.orders.OrderByUser(dctx, o.ActivityID, o.UserID)
		switch {
		case lerr == nil && got.ID == o.ID:
			s.remember(got)
			return got, nil
		case lerr == nil:
			s.giveBack(ctx, o, "duplicate")
			s.remember(got)
			return seckill.Order{}, alreadyPurchased(got.ID)
		case errors.Is(lerr, order.ErrNotFound):
			s.giveBack(ctx, o, "commit_failed")
			return seckill.Order{}, unavailable("the order database failed; nothing was sold", cause)
		}
	}
	s.m.leaked.Inc()
	s.log.Error("order commit outcome unknown; unit held until reconciliation",
		"activity_id", o.ActivityID, "user_id", o.UserID, "order_id", o.ID, "err", errors.Join(cause, lerr))
	return seckill.Order{}, unavailable("the order database failed; if an order was written it will show under your orders", cause)
}

// giveBack returns the unit the purchase deducted, if its deduct landed and
// the stock was not reloaded since (a reload already counted the unit as
// unsold). Returning is idempotent, so a Redis that does not answer is asked
// again; only when it never answers is the unit leaked to reconciliation.
func (s *Service) giveBack(ctx context.Context, o seckill.Order, why string) {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		dctx, cancel := detached(ctx)
		var remaining int64
		remaining, err = s.stock.Return(dctx, o.ActivityID, o.Fence)
		cancel()
		switch {
		case err == nil:
			s.m.returned.WithLabelValues(why).Inc()
			s.soldOut.Delete(o.ActivityID)
			s.m.remaining.WithLabelValues(itoa(o.ActivityID)).Set(float64(remaining))
			return
		case errors.Is(err, stock.ErrNoDeduct):
			return
		case errors.Is(err, stock.ErrStale), errors.Is(err, stock.ErrNotLoaded):
			s.log.Info("unit not returned: the stock was reloaded since the deduct", "activity_id", o.ActivityID, "reason", why)
			return
		}
	}
	s.m.leaked.Inc()
	s.log.Error("unit could not be returned; reconcile the activity", "activity_id", o.ActivityID, "fence", o.Fence, "reason", why, "err", err)
}

func (s *Service) replay(o seckill.Order, req BuyRequest) (seckill.Order, error) {
	if o.ActivityID != req.ActivityID {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "this Idempotency-Key was already used for activity %d", o.ActivityID)
	}
	return o, nil
}

func (s *Service) remember(o seckill.Order) {
	if s.boughtCount.Load() >= boughtCap {
		return
	}
	if _, loaded := s.bought.LoadOrStore(buyer{o.ActivityID, o.UserID}, o.ID); !loaded {
		s.boughtCount.Add(1)
	}
}

func (s *Service) markSoldOut(activityID, remaining int64) {
	if remaining <= 0 {
		s.soldOut.Store(activityID, s.now())
	}
}

func (s *Service) gate(activityID int64) gate {
	if g, ok := s.gates.Load(activityID); ok {
		return g.(gate)
	}
	g, _ := s.gates.LoadOrStore(activityID, make(gate, 1))
	return g.(gate)
}

// gate is a semaphore of one.
type gate chan struct{}

// enter takes the gate, waiting at most wait (0: not at all) and no longer
// than ctx allows. It reports whether it got in.
func (g gate) enter(ctx context.Context, wait time.Duration) bool {
	select {
	case g <- struct{}{}:
		return true
	default:
	}
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (g gate) leave() { <-g }

// activity returns the activity, from the cache when it can.
func (s *Service) activity(ctx context.Context, id int64) (seckill.Activity, error) {
	if a, ok := s.activities.Load(id); ok {
		return a.(seckill.Activity), nil
	}
	a, err := s.orders.Activity(ctx, id)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		return seckill.Activity{}, seckill.Errorf(seckill.EActivityNotFound, "no activity %d", id)
	case err != nil:
		return seckill.Activity{}, unavailable("the order database did not answer", err)
	}
	s.activities.Store(id, a)
	return a, nil
}

// ActivityView is an activity with its live stock.
type ActivityView struct {
	seckill.Activity
	Remaining int64
	Status    string
}

// Activity returns the activity and what is left of it. Remaining stock
// comes from Redis; when Redis has none loaded or does not answer, it is
// computed from the database.
func (s *Service) Activity(ctx context.Context, id int64) (ActivityView, error) {
	a, err := s.activity(ctx, id)
	if err != nil {
		return ActivityView{}, err
	}
	remaining, err := s.stock.Remaining(ctx, id)
	if err != nil {
		n, cerr := s.orders.CountOrders(ctx, id)
		if cerr != nil {
			return ActivityView{}, unavailable("neither Redis nor the database answered", errors.Join(err, cerr))
		}
		remaining = max(a.TotalStock-n, 0)
	}
	return ActivityView{Activity: a, Remaining: remaining, Status: a.StatusAt(s.now(), remaining)}, nil
}

// MyOrder returns the user's order for the activity.
func (s *Service) MyOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	if _, err := s.activity(ctx, activityID); err != nil {
		return seckill.Order{}, err
	}
	o, err := s.orders.OrderByUser(ctx, activityID, userID)
	switch {
	case errors.Is(err, order.ErrNotFound):
		return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "you hold no order for activity %d", activityID)
	case err != nil:
		return seckill.Order{}, unavailable("the order database did not answer", err)
	}
	return o, nil
}

// CreateActivity validates and stores a new activity and loads its stock
// into Redis. A failure to load leaves the activity created; preloading it
// later is safe.
func (s *Service) CreateActivity(ctx context.Context, a seckill.Activity) (ActivityView, error) {
	if err := a.Validate(); err != nil {
		return ActivityView{}, err
	}
	a.StartsAt, a.EndsAt = a.StartsAt.UTC(), a.EndsAt.UTC()
	created, err := s.orders.CreateActivity(ctx, a)
	if err != nil {
		return ActivityView{}, unavailable("the order database failed; the activity was not created", err)
	}
	s.activities.Store(created.ID, created)
	if _, err := s.Reconcile(ctx, created.ID); err != nil {
		s.log.WarnContext(ctx, "stock of new activity not loaded; preload it", "activity_id", created.ID, "err", err)
	}
	return ActivityView{Activity: created, Remaining: created.TotalStock, Status: created.StatusAt(s.now(), created.TotalStock)}, nil
}

// Preload loads the activity's stock into Redis as total_stock minus the
// orders in the database. It is safe at any time: see Reconcile.
func (s *Service) Preload(ctx context.Context, id int64) (remaining int64, err error) {
	r, err := s.Reconcile(ctx, id)
	return r.After, err
}

// Audit compares the database, Redis and the activity's total.
type Audit struct {
	ActivityID     int64
	TotalStock     int64
	Orders         int64
	RedisRemaining int64 // 0 when Redis holds no stock for the activity
	Oversold       bool  // Orders > TotalStock
	Consistent     bool  // Orders + RedisRemaining == TotalStock
}

// Audit reports whether the activity's books balance.
func (s *Service) Audit(ctx context.Context, id int64) (Audit, error) {
	a, err := s.activity(ctx, id)
	if err != nil {
		return Audit{}, err
	}
	n, err := s.orders.CountOrders(ctx, id)
	if err != nil {
		return Audit{}, unavailable("the order database did not answer", err)
	}
	remaining, err := s.stock.Remaining(ctx, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		remaining = 0
	case err != nil:
		return Audit{}, unavailable("Redis did not answer", err)
	}
	return Audit{
		ActivityID:     id,
		TotalStock:     a.TotalStock,
		Orders:         n,
		RedisRemaining: remaining,
		Oversold:       n > a.TotalStock,
		Consistent:     n+remaining == a.TotalStock,
	}, nil
}

// Reconciliation reports what Reconcile changed.
type Reconciliation struct {
	ActivityID int64
	TotalStock int64
	Orders     int64
	Before     int64 // Redis remaining before; -1 when none was loaded
	After      int64
	Changed    bool
}

// LoadedBefore is Before, or nil when Redis held no stock for the activity,
// for reports where a sentinel number could be read as stock.
func (r Reconciliation) LoadedBefore() *int64 {
	if r.Before < 0 {
		return nil
	}
	return &r.Before
}

// Reconcile sets the activity's stock in Redis to total_stock minus the
// orders in the database, under the activity's lock, and reports what it
// changed. It is safe at any time, during a sale and after Redis lost its
// data: the lock keeps live purchases out, and the fence it claims in the
// database keeps out any purchase whose lease has expired but which has not
// written yet.
func (s *Service) Reconcile(ctx context.Context, id int64) (Reconciliation, error) {
	a, err := s.activity(ctx, id)
	if err != nil {
		return Reconciliation{}, err
	}
	key := stock.LockKey(s.cfg.KeyPrefix, id)
	// After Redis lost its data the fence counter starts again from zero;
	// raising it past the database's keeps every new grant newer than any
	// order already written.
	dbFence, err := s.orders.Fence(ctx, id)
	if err != nil {
		return Reconciliation{}, unavailable("the order database did not answer", err)
	}
	if err := s.locks.SeedFence(ctx, key, dbFence); err != nil {
		return Reconciliation{}, unavailable("Redis did not answer", err)
	}
	lk, err := s.locks.Obtain(ctx, key, s.cfg.LockTTL, &lock.ObtainOptions{Wait: 2*s.cfg.LockTTL + s.cfg.LockWait})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return Reconciliation{}, &seckill.Error{Code: seckill.EBusy, Message: "purchases kept the activity's lock busy; try again", RetryAfter: retryAfter, Err: err}
	case err != nil:
		return Reconciliation{}, unavailable("Redis did not answer", err)
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "lock release", "activity_id", id, "fence", lk.Fence(), "err", err)
		}
	}()
	lease := lk.Context()
	if err := s.orders.ClaimFence(lease, id, lk.Fence()); err != nil {
		return Reconciliation{}, unavailable("could not claim the activity in the database", err)
	}
	n, err := s.orders.CountOrders(lease, id)
	if err != nil {
		return Reconciliation{}, unavailable("the order database did not answer", err)
	}
	before, err := s.stock.Remaining(lease, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		before = -1
	case err != nil:
		return Reconciliation{}, unavailable("Redis did not answer", err)
	}
	after := max(a.TotalStock-n, 0)
	if err := s.stock.Load(lease, id, after, lk.Fence()); err != nil {
		return Reconciliation{}, unavailable("Redis did not answer; stock not loaded", err)
	}
	if after > 0 {
		s.soldOut.Delete(id)
	} else {
		s.soldOut.Store(id, s.now())
	}
	s.m.remaining.WithLabelValues(itoa(id)).Set(float64(after))
	r := Reconciliation{ActivityID: id, TotalStock: a.TotalStock, Orders: n, Before: before, After: after, Changed: before != after}
	if r.Changed {
		s.m.reconciled.Inc()
		s.log.InfoContext(ctx, "stock reconciled", "activity_id", id, "orders", n, "before", before, "after", after)
	}
	return r, nil
}

// Ready reports whether Redis and the database answer.
func (s *Service) Ready(ctx context.Context) error {
	if s.redis != nil {
		if err := s.redis.Ping(ctx).Err(); err != nil {
			return unavailable("Redis does not answer", err)
		}
	}
	if err := s.orders.Ping(ctx); err != nil {
		return unavailable("the order database does not answer", err)
	}
	return nil
}

func unavailable(msg string, err error) *seckill.Error {
	return &seckill.Error{Code: seckill.EUnavailable, Message: msg, RetryAfter: retryAfter, Err: err}
}

func busy(err error) *seckill.Error {
	return &seckill.Error{Code: seckill.EBusy, Message: "another purchase holds this activity; try again", RetryAfter: retryAfter, Err: err}
}

func soldOut() *seckill.Error {
	return seckill.Errorf(seckill.ESoldOut, "no stock left")
}

func alreadyPurchased(orderID string) *seckill.Error {
	return &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "this user already holds an order for this activity", OrderID: orderID}
}

// detached keeps ctx's values but not its cancellation, with its own
// deadline: for work that must finish after the caller has gone.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
}

func newOrderID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
