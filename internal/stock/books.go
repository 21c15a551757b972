package stock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

// FillBooks sets Redis's side of each activity's books: the stock it has
// left, and whether it holds any (RedisLoaded false: none, never preloaded
// or lost). All activities are read in one pipeline, not one round trip
// each: a check of every activity must not cost hundreds of them.
func (s *Store) FillBooks(ctx context.Context, books []seckill.Books) error {
	cmds := make([]*redis.StringCmd, len(books))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range books {
			cmds[i] = p.HGet(ctx, s.key(books[i].ActivityID), keys.StockRemaining)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("stock: books: %w", err)
	}
	for i, cmd := range cmds {
		left, err := cmd.Int64()
		switch {
		case errors.Is(err, redis.Nil):
			books[i].RedisRemaining, books[i].RedisLoaded = 0, false
		case err != nil:
			return fmt.Errorf("stock: remaining of activity %d: %w", books[i].ActivityID, err)
		default:
			books[i].RedisRemaining, books[i].RedisLoaded = left, true
		}
	}
	return nil
}
