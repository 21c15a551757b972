package stock

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
)

// FillBooks sets Redis's side of each activity's books: the stock it has
// left, and whether it holds any (RedisLoaded false: none, never preloaded
// or lost).
func (s *Store) FillBooks(ctx context.Context, books []seckill.Books) error {
	for i := range books {
		left, err := s.Remaining(ctx, books[i].ActivityID)
		switch {
		case errors.Is(err, ErrNotLoaded):
			books[i].RedisRemaining, books[i].RedisLoaded = 0, false
		case err != nil:
			return err
		default:
			books[i].RedisRemaining, books[i].RedisLoaded = left, true
		}
	}
	return nil
}
