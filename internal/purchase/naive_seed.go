//go:build seckill_naive

package purchase

import (
	"context"
	"errors"
	"os"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

func init() {
	if os.Getenv("SECKILL_NAIVE") == "1" {
		naive = seedHandler
	}
}

// seedHandler is incident A's handler (docs/SEEDS.md), kept only to prove
// that the load-test harness catches an oversell:
//   - the lock has a constant value and a TTL shorter than a slow
//     verification call (here a tenth of the verification timeout; the
//     seed's 10 s lock sat under a 30 s HTTP timeout, and a shorter lease
//     makes the overlap, and so the oversell, show in a short load test);
//   - the release is a blind DEL, which deletes whoever holds the lock now;
//   - the stock check reads, then writes;
//   - the order is inserted without the database's fence and stock guard.
func seedHandler(ctx context.Context, s *Service, req BuyRequest) (seckill.Order, error) {
	a, err := s.activity(ctx, req.ActivityID)
	if err != nil {
		return seckill.Order{}, err
	}
	key := s.cfg.KeyPrefix + "naive:key:" + strconv.FormatInt(a.ID, 10)
	ok, err := s.redis.SetNX(ctx, key, "val", s.cfg.UserCheckTimeout/10).Result()
	if err != nil {
		return seckill.Order{}, unavailable("redis", err)
	}
	if !ok {
		return seckill.Order{}, &seckill.Error{Code: seckill.EBusy, Message: "busy", RetryAfter: retryAfter}
	}
	defer s.redis.Del(context.WithoutCancel(ctx), key)

	err = s.users.Verify(ctx, req.UserID, req.ActivityID)
	switch {
	case errors.Is(err, usercheck.ErrRejected):
		return seckill.Order{}, seckill.Errorf(seckill.EUserRejected, "rejected")
	case err != nil:
		return seckill.Order{}, unavailable("user check", err)
	}
	stockKey := stock.Key(s.cfg.KeyPrefix, a.ID)
	n, err := s.redis.HGet(ctx, stockKey, "remaining").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return seckill.Order{}, unavailable("redis", err)
	}
	if n <= 0 {
		return seckill.Order{}, soldOut()
	}
	if err := s.redis.HIncrBy(ctx, stockKey, "remaining", -1).Err(); err != nil {
		return seckill.Order{}, unavailable("redis", err)
	}
	o := seckill.Order{ID: newOrderID(), ActivityID: a.ID, UserID: req.UserID, Status: seckill.OrderStatusCreated, CreatedAt: s.now().UTC()}
	if err := s.orders.CreateOrderUnguarded(ctx, o); err != nil {
		return seckill.Order{}, unavailable("database", err)
	}
	return o, nil
}
