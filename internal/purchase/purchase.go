// Package purchase: API agreed with internal/httpapi and cmd/seckill; bodies being written.
package purchase

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Config tunes the purchase path.
type Config struct {
	LockTTL          time.Duration // lease of the per-activity lock
	UserCheckTimeout time.Duration // deadline of one verification call; must be < LockTTL
	LockWait         time.Duration // bounded wait for a busy lock; 0 tries once
	KeyPrefix        string        // prefix of every Redis key
	Now              func() time.Time
}

// Deps are the service's dependencies.
type Deps struct {
	Locks    *lock.Client
	Stock    *stock.Store
	Orders   *order.Store
	Users    usercheck.Verifier
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: no metrics
}

// Service runs purchases and the ops operations.
type Service struct{}

// New checks cfg and returns a Service.
func New(cfg Config, deps Deps) (*Service, error) { return &Service{}, nil }

// BuyRequest is one buyer's attempt to buy one unit.
type BuyRequest struct {
	ActivityID     int64
	UserID         int64
	IdempotencyKey string
}

// Buy sells one unit. Errors are *seckill.Error.
func (s *Service) Buy(ctx context.Context, req BuyRequest) (seckill.Order, error) {
	return seckill.Order{}, errors.New("stub")
}

// ActivityView is an activity with its live stock.
type ActivityView struct {
	seckill.Activity
	Remaining int64
	Status    string
}

func (s *Service) Activity(ctx context.Context, id int64) (ActivityView, error) {
	return ActivityView{}, errors.New("stub")
}
func (s *Service) MyOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	return seckill.Order{}, errors.New("stub")
}
func (s *Service) CreateActivity(ctx context.Context, a seckill.Activity) (ActivityView, error) {
	return ActivityView{}, errors.New("stub")
}
func (s *Service) Preload(ctx context.Context, id int64) (remaining int64, err error) {
	return 0, errors.New("stub")
}

// Audit compares the database, Redis and the activity's total.
type Audit struct {
	ActivityID     int64
	TotalStock     int64
	Orders         int64
	RedisRemaining int64
	Oversold       bool
	Consistent     bool
}

func (s *Service) Audit(ctx context.Context, id int64) (Audit, error) { return Audit{}, errors.New("stub") }

// Reconciliation reports what Reconcile changed.
type Reconciliation struct {
	ActivityID int64
	TotalStock int64
	Orders     int64
	Before     int64 // Redis remaining before; -1 when not loaded
	After      int64
	Changed    bool
}

func (s *Service) Reconcile(ctx context.Context, id int64) (Reconciliation, error) {
	return Reconciliation{}, errors.New("stub")
}

// Ready reports whether Redis and the database answer.
func (s *Service) Ready(ctx context.Context) error { return nil }

// Close waits for the service's background work.
func (s *Service) Close() error { return nil }
