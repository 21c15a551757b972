// Package order: STUB with the agreed signatures; replaced by the real implementation.
package order

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

var (
	ErrActivityNotFound   = errors.New("order: activity not found")
	ErrNotFound           = errors.New("order: not found")
	ErrDuplicate          = errors.New("order: user already holds an order for this activity")
	ErrIdempotencyKeyUsed = errors.New("order: idempotency key already used")
	ErrStaleFence         = errors.New("order: stale fence")
	ErrSoldOut            = errors.New("order: sold out")
	ErrCommitUnknown      = errors.New("order: commit outcome unknown")
)

type Store struct{ db *gorm.DB }

func Open(ctx context.Context, dsn string) (*Store, error) { return nil, errors.New("stub") }
func New(db *gorm.DB) *Store                               { return &Store{db: db} }
func (s *Store) Close() error                              { return nil }
func (s *Store) Ping(ctx context.Context) error            { return nil }
func (s *Store) CreateActivity(ctx context.Context, a seckill.Activity) (seckill.Activity, error) {
	return a, nil
}
func (s *Store) Activity(ctx context.Context, id int64) (seckill.Activity, error) {
	return seckill.Activity{}, ErrActivityNotFound
}
func (s *Store) CreateOrder(ctx context.Context, o seckill.Order) (seckill.Order, error) {
	return o, nil
}
func (s *Store) OrderByUser(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	return seckill.Order{}, ErrNotFound
}
func (s *Store) OrderByIdempotencyKey(ctx context.Context, userID int64, key string) (seckill.Order, error) {
	return seckill.Order{}, ErrNotFound
}
func (s *Store) CountOrders(ctx context.Context, activityID int64) (int64, error) { return 0, nil }
func (s *Store) Fence(ctx context.Context, activityID int64) (int64, error)       { return 0, nil }
