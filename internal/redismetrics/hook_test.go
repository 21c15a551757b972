package redismetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// On a real Redis: a nil reply and a script load are not failures, an error
// reply and an unreachable server are.
func TestHookCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := New(reg, nil)
	ctx := context.Background()
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(h)
	key := testenv.Prefix(t) + "hook"
	t.Cleanup(func() { rdb.Del(context.Background(), key) })

	_ = rdb.Get(ctx, key).Err()                                      // nil reply
	_ = redis.NewScript("return 1 -- "+key).Run(ctx, rdb, nil).Err() // NOSCRIPT, then EVAL
	_ = rdb.Pipeline().Get(ctx, key).Err()                           // queued only
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, key); return nil }); !errors.Is(err, redis.Nil) {
		t.Fatalf("pipelined GET of a missing key: %v", err)
	}
	check(t, reg, map[string]float64{kindReply: 0, kindConnection: 0, kindTimeout: 0})

	rdb.Set(ctx, key, "x", 0)
	if err := rdb.HGet(ctx, key, "f").Err(); err == nil {
		t.Fatal("HGET on a string succeeded")
	}
	check(t, reg, map[string]float64{kindReply: 1})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	dead := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = dead.Close() })
	dead.AddHook(h)
	_ = dead.Ping(ctx).Err()
	check(t, reg, map[string]float64{kindReply: 1, kindConnection: 1, kindTimeout: 0})
}

func TestKindOf(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for err, want := range map[error]string{
		nil:       "",
		redis.Nil: "",
		ctx.Err(): "",
		fmt.Errorf("x: %w", context.DeadlineExceeded): kindTimeout,
		&net.OpError{Op: "read", Err: timeoutErr{}}:   kindTimeout,
		fmt.Errorf("dial: %w", net.ErrClosed):         kindConnection,
	} {
		if got := kindOf(err); got != want {
			t.Errorf("kindOf(%v) = %q, want %q", err, got, want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func check(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	for kind, w := range want {
		if got := testenv.Metric(t, reg, "seckill_redis_errors_total", map[string]string{"kind": kind}); got != w {
			t.Errorf("seckill_redis_errors_total{kind=%q} = %v, want %v", kind, got, w)
		}
	}
}
