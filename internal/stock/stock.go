// Package stock: STUB with the agreed signatures; replaced by the real implementation.
package stock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

var (
	ErrSoldOut   = errors.New("stock: sold out")
	ErrNotLoaded = errors.New("stock: not loaded")
)

type Store struct{ rdb redis.UniversalClient }

func New(rdb redis.UniversalClient, prefix string) *Store                       { return &Store{rdb: rdb} }
func (s *Store) Load(ctx context.Context, activityID, remaining int64) error    { return nil }
func (s *Store) Deduct(ctx context.Context, activityID int64) (int64, error)    { return 0, nil }
func (s *Store) Return(ctx context.Context, activityID int64) (int64, error)    { return 0, nil }
func (s *Store) Remaining(ctx context.Context, activityID int64) (int64, error) { return 0, nil }
func LockKey(prefix string, activityID int64) string {
	return fmt.Sprintf("%sseckill:{act:%d}:lock", prefix, activityID)
}
