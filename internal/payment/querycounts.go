package payment

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
)

// queriesTTL keeps an order's query counts while callbacks may wait for
// them; counts that expired read 0, which only makes a callback ask again.
// A variable for the test of that expiry.
var queriesTTL = time.Minute

// queryCounts are each order's counts of provider queries in Redis, which
// callbacks wait on (callback.go): how many started, and the number of the
// last one whose answer was written.
type queryCounts struct {
	redis redis.UniversalClient
	keys  keys.Space
	log   *slog.Logger
}

// started returns how many provider queries of o's payment have started
// (within queriesTTL of the last count or answer).
func (q queryCounts) started(ctx context.Context, o seckill.Order) (int64, error) {
	return q.read(ctx, o, "started", "query count")
}

// answered returns the number of the last query of o's payment whose
// answer was written (0: none within queriesTTL).
func (q queryCounts) answered(ctx context.Context, o seckill.Order) (int64, error) {
	return q.read(ctx, o, "answered", "answered query")
}

func (q queryCounts) read(ctx context.Context, o seckill.Order, field, what string) (int64, error) {
	n, err := q.redis.HGet(ctx, q.key(o), field).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("payment: order %s: %s: %w", o.ID, what, err)
	}
	return n, nil
}

// count counts a provider query of o's payment about to start and returns
// its number, 0 when it could not be counted. A failure is logged only: the
// callbacks waiting for it then ask again.
func (q queryCounts) count(ctx context.Context, o seckill.Order) int64 {
	pipe := q.redis.TxPipeline()
	n := pipe.HIncrBy(ctx, q.key(o), "started", 1)
	pipe.PExpire(ctx, q.key(o), queriesTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		q.log.InfoContext(ctx, "payment: provider query not counted", "order_id", o.ID, "err", err)
		return 0
	}
	return n.Val()
}

// markAnswered records that query n of o's payment was answered and its
// answer written (answered.lua). A failure is logged only: the callbacks
// waiting for it then ask again.
func (q queryCounts) markAnswered(ctx context.Context, o seckill.Order, n int64) {
	if n == 0 {
		return
	}
	if err := answeredScript.Run(ctx, q.redis, []string{q.key(o)}, n, queriesTTL.Milliseconds()).Err(); err != nil {
		q.log.InfoContext(ctx, "payment: provider answer not marked", "order_id", o.ID, "err", err)
	}
}

func (q queryCounts) key(o seckill.Order) string {
	return q.keys.PaymentQueryCounts(o.ActivityID, o.ID)
}

// luaFiles holds the payment's scripts, one job and one .lua file each.
//
//go:embed *.lua
var luaFiles embed.FS

// answeredScript marks a query answered while its count lives.
var answeredScript = luascript.Load(luaFiles, "answered.lua")
