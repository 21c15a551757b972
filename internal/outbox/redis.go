package outbox

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/luascript"
	"github.com/seckill-oss/seckill/internal/order"
)

// RedisSink appends events to a Redis stream, one entry each: fields `id`
// (the event id), `type`, `subject` (the order id) and `event` (the
// CloudEvents envelope, JSON).
type RedisSink struct {
	rdb    redis.UniversalClient
	stream string
	maxLen int64
	// waitReplicas, when above 0, makes each batch WAIT for that many
	// replicas, within waitTimeout: an entry only the old primary held is
	// lost in a failover, so it is not acknowledged until a replica has it.
	waitReplicas int
	waitTimeout  time.Duration
}

// NewRedisSink is a sink to stream on rdb, trimmed to about maxLen entries
// (0: not trimmed), waiting for waitReplicas replicas (0: none).
func NewRedisSink(rdb redis.UniversalClient, stream string, maxLen int64, waitReplicas int, waitTimeout time.Duration) *RedisSink {
	return &RedisSink{rdb: rdb, stream: stream, maxLen: maxLen, waitReplicas: waitReplicas, waitTimeout: waitTimeout}
}

// ErrTooFewReplicas: the batch reached fewer replicas than asked for in time.
var ErrTooFewReplicas = errors.New("outbox: the events reached too few Redis replicas")

//go:embed append.lua
var luaFiles embed.FS

var appendScript = luascript.Load(luaFiles, "append.lua")

// Send appends the events with one script (append.lua), and with replicas
// asked for WAITs for them on the same connection, on the stream's primary:
// WAIT covers that connection's writes only.
func (s *RedisSink) Send(ctx context.Context, events []order.Event) error {
	args := make([]any, 0, 1+4*len(events))
	args = append(args, s.maxLen)
	for _, e := range events {
		args = append(args, e.ID, e.Type, e.OrderID, e.Payload)
	}
	if s.waitReplicas <= 0 {
		if err := appendScript.Run(ctx, s.rdb, []string{s.stream}, args...).Err(); err != nil {
			return fmt.Errorf("outbox: append %d events to %s: %w", len(events), s.stream, err)
		}
		return nil
	}
	node, err := s.primary(ctx)
	if err != nil {
		return fmt.Errorf("outbox: append %d events to %s: %w", len(events), s.stream, err)
	}
	node = node.WithTimeout(node.Options().ReadTimeout + s.waitTimeout)
	// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
	pipe := node.Pipeline()
	appended := appendScript.Eval(ctx, pipe, []string{s.stream}, args...)
	acked := pipe.Do(ctx, "WAIT", s.waitReplicas, s.waitTimeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("outbox: append %d events to %s: %w", len(events), s.stream, err)
	}
	if err := appended.Err(); err != nil {
		return fmt.Errorf("outbox: append %d events to %s: %w", len(events), s.stream, err)
	}
	if n, err := acked.Int64(); err != nil || n < int64(s.waitReplicas) {
		if err != nil {
			return fmt.Errorf("%w: %d of %d: %w", ErrTooFewReplicas, n, s.waitReplicas, err)
		}
		return fmt.Errorf("%w: %d of %d", ErrTooFewReplicas, n, s.waitReplicas)
	}
	return nil
}

// primary is the client of the stream's primary: the cluster's node for its
// slot, or the one client of a single node or a Sentinel-managed primary.
func (s *RedisSink) primary(ctx context.Context) (*redis.Client, error) {
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, s.stream)
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("WAIT needs a *redis.Client or *redis.ClusterClient, not %T", s.rdb)
}

// Close does nothing: the Redis client is the service's.
func (s *RedisSink) Close() error { return nil }
