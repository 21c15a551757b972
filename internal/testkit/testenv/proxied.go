package testenv

import (
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// ProxiedRedis returns a client that reaches the test Redis through
// Toxiproxy (internal/testkit/toxic): one attempt per command (the test controls the
// faults), context deadlines honoured, replies awaited at most readTimeout
// (0: go-redis's default), and a connection already open, so a command sent
// under a fault goes out at once instead of waiting in the handshake. Both
// close when the test ends.
func ProxiedRedis(t testing.TB, readTimeout time.Duration) (*redis.Client, *toxic.Proxy) {
	t.Helper()
	p, err := toxic.New(redisAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return proxiedClient(t, p.Addr(), readTimeout), p
}

// DelayedRedis is ProxiedRedis through internal/testkit/faultproxy, for the tests
// that need what Toxiproxy does not do: commands already held keep their
// delay when the delay is lifted, and Conns tells when every held command
// has landed.
func DelayedRedis(t testing.TB, readTimeout time.Duration) (*redis.Client, *faultproxy.Proxy) {
	t.Helper()
	p, err := faultproxy.New(redisAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return proxiedClient(t, p.Addr(), readTimeout), p
}

func redisAddr(t testing.TB) string {
	t.Helper()
	opt, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	return opt.Addr
}

func proxiedClient(t testing.TB, addr string, readTimeout time.Duration) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	opt.Addr, opt.MaxRetries, opt.ContextTimeoutEnabled = addr, -1, true
	if readTimeout > 0 {
		opt.ReadTimeout = readTimeout
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	// On a loaded machine a short read timeout can miss a healthy reply:
	// that is setup, not the property under test, so try a few times.
	for range 20 {
		if err = rdb.Ping(t.Context()).Err(); err == nil {
			return rdb
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(err)
	return nil
}

// MySQLConfig is dsn parsed; a DSN that does not parse fails the test.
func MySQLConfig(t testing.TB, dsn string) *mysql.Config {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ProxiedMySQL is a copy of direct that reaches its server through
// Toxiproxy (internal/testkit/toxic), and the proxy, closed when the test
// ends.
func ProxiedMySQL(t testing.TB, direct *mysql.Config) (*mysql.Config, *toxic.Proxy) {
	t.Helper()
	return throughProxy(t, direct, toxic.New)
}

// DelayedMySQL is ProxiedMySQL through internal/testkit/faultproxy, for the
// tests that hold single commands (a COMMIT) rather than the whole link.
func DelayedMySQL(t testing.TB, direct *mysql.Config) (*mysql.Config, *faultproxy.Proxy) {
	t.Helper()
	return throughProxy(t, direct, faultproxy.New)
}

// throughProxy starts a proxy to direct's server with start, closed when the
// test ends, and returns a copy of direct that goes through it.
func throughProxy[P interface {
	Addr() string
	Close() error
}](t testing.TB, direct *mysql.Config, start func(upstream string) (P, error)) (*mysql.Config, P) {
	t.Helper()
	p, err := start(direct.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cfg := direct.Clone()
	cfg.Addr = p.Addr()
	return cfg, p
}
