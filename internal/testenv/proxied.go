package testenv

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/faultproxy"
)

// ProxiedRedis returns a client that reaches the test Redis through a fault
// proxy: one attempt per command (the test controls the faults), context
// deadlines honoured, replies awaited at most readTimeout (0: go-redis's
// default), and a connection already open, so a command sent under a fault
// goes out at once instead of waiting in the handshake. Both close when the
// test ends.
func ProxiedRedis(t testing.TB, readTimeout time.Duration) (*redis.Client, *faultproxy.Proxy) {
	t.Helper()
	opt, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(opt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	opt.Addr, opt.MaxRetries, opt.ContextTimeoutEnabled = p.Addr(), -1, true
	if readTimeout > 0 {
		opt.ReadTimeout = readTimeout
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() {
		_ = rdb.Close()
		_ = p.Close()
	})
	// On a loaded machine a short read timeout can miss a healthy reply:
	// that is setup, not the property under test, so try a few times.
	for range 20 {
		if err = rdb.Ping(t.Context()).Err(); err == nil {
			return rdb, p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(err)
	return nil, nil
}
