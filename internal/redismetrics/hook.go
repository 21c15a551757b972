// Package redismetrics counts failed Redis commands for the operators'
// dashboard: a go-redis hook, so every user of the client (locks, stock,
// idempotency) is counted without each keeping its own numbers.
package redismetrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/promreg"
)

// Values of the kind label.
const (
	kindTimeout    = "timeout"    // the client's or the caller's deadline passed
	kindConnection = "connection" // no connection, or it broke
	kindReply      = "reply"      // Redis answered with an error
)

// Hook is a redis.Hook counting failed commands in
// seckill_redis_errors_total{kind}. A nil reply (redis.Nil), a caller that
// gave up (context.Canceled) and the NOSCRIPT that makes go-redis load a
// script are outcomes, not failures, and are not counted.
type Hook struct {
	errors *prometheus.CounterVec
}

var _ redis.Hook = (*Hook)(nil)

// New returns a Hook registered with reg; a collector of the same name
// already there (a second client on one registry) is shared. A failure to
// register is logged to log (nil: slog.Default()).
func New(reg prometheus.Registerer, log *slog.Logger) *Hook {
	c := promreg.NewRegistrar(reg, log).CounterVec("seckill_redis_errors_total",
		"Redis commands that failed, by kind: timeout, connection, reply (an error answered by Redis).", "kind")
	promreg.Zero(c.MetricVec, kindTimeout, kindConnection, kindReply)
	return &Hook{errors: c}
}

// DialHook implements redis.Hook. A failed dial fails the command that
// needed the connection, and is counted there, once.
func (h *Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h *Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if !connectionSetup(cmd) {
			h.count(err)
		}
		return err
	}
}

// ProcessPipelineHook implements redis.Hook. A pipeline counts once, by its
// first failed command.
func (h *Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if !connectionSetup(c) && kindOf(c.Err()) != "" {
				h.count(c.Err())
				return err
			}
		}
		if len(cmds) == 0 || !connectionSetup(cmds[0]) {
			h.count(err)
		}
		return err
	}
}

// connectionSetup reports the commands go-redis sends on a new connection
// and whose refusal it tolerates (an older Redis knows no CLIENT SETINFO).
func connectionSetup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "client":
		return true
	}
	return false
}

func (h *Hook) count(err error) {
	if kind := kindOf(err); kind != "" {
		h.errors.WithLabelValues(kind).Inc()
	}
}

// kindOf classifies err; "" means not a failure.
func kindOf(err error) string {
	var rerr redis.Error
	var nerr net.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, context.Canceled):
		return ""
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return kindTimeout
	case errors.As(err, &rerr):
		if strings.HasPrefix(rerr.Error(), "NOSCRIPT") {
			return ""
		}
		return kindReply
	default:
		return kindConnection
	}
}
