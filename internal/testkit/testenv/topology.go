package testenv

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis topologies of the scale-out tests, which scripts/services.sh
// starts on loopback ports of their own (`bash scripts/services.sh
// topologies`) and scripts/test.sh exports. Tests that need one skip when its
// variable is unset, so a plain `go test` still passes.
const (
	// RedisClusterURLEnv: a 3-primary/3-replica Redis Cluster, in
	// redis.ParseClusterURL syntax.
	RedisClusterURLEnv = "SECKILL_TEST_REDIS_CLUSTER_URL"
	// RedisSentinelURLEnv: Sentinels watching a primary with one replica, in
	// redis.ParseFailoverURL syntax.
	RedisSentinelURLEnv = "SECKILL_TEST_REDIS_SENTINEL_URL"
)

// RedisClusterURL returns the test cluster's URL, or skips the test.
func RedisClusterURL(t testing.TB) string {
	t.Helper()
	return topologyURL(t, RedisClusterURLEnv, "Redis Cluster")
}

// RedisSentinelURL returns the test Sentinels' URL, or skips the test.
func RedisSentinelURL(t testing.TB) string {
	t.Helper()
	return topologyURL(t, RedisSentinelURLEnv, "Redis Sentinel")
}

func topologyURL(t testing.TB, env, what string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		t.Skipf("testenv: %s is unset: no %s to run on; `eval \"$(bash scripts/services.sh topologies)\"` starts one (scripts/test.sh does)", env, what)
	}
	return u
}

// RedisCluster returns a client of the test cluster, closed when the test
// ends, and a key prefix of the test's own, deleted from every primary when
// the test ends. It skips the test when the cluster is not configured.
func RedisCluster(t testing.TB) (*redis.ClusterClient, string) {
	t.Helper()
	opt, err := redis.ParseClusterURL(RedisClusterURL(t))
	if err != nil {
		t.Fatalf("testenv: %s: %v", RedisClusterURLEnv, err)
	}
	opt.ClusterStateReloadInterval = time.Second
	holdTopology(t, "cluster")
	rdb := redis.NewClusterClient(opt)
	return rdb, topologyPrefix(t, rdb, func(ctx context.Context, prefix string) {
		// A cluster node refuses a DEL of keys in several slots: one
		// key at a time, pipelined.
		err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			keys, err := node.Keys(ctx, prefix+"*").Result()
			if err != nil || len(keys) == 0 {
				return err
			}
			_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(ctx, k)
				}
				return nil
			})
			return err
		})
		if err != nil {
			t.Errorf("testenv: delete %s* from the cluster: %v", prefix, err)
		}
	})
}

// RedisSentinel returns a client of the test Sentinels' primary, closed
// when the test ends, and a key prefix of the test's own, deleted when the
// test ends. It skips the test when Sentinel is not configured.
func RedisSentinel(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseFailoverURL(RedisSentinelURL(t))
	if err != nil {
		t.Fatalf("testenv: %s: %v", RedisSentinelURLEnv, err)
	}
	holdTopology(t, "sentinel")
	rdb := redis.NewFailoverClient(opt)
	return rdb, topologyPrefix(t, rdb, func(_ context.Context, prefix string) { DeletePrefix(t, rdb, prefix) })
}

func topologyPrefix(t testing.TB, rdb redis.UniversalClient, deleteAll func(context.Context, string)) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		t.Fatalf("testenv: the test's Redis topology does not answer (bash scripts/services.sh topologies): %v", err)
	}
	p := "t:" + randomHex(4) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		deleteAll(ctx, p)
		_ = rdb.Close()
	})
	return p
}

// holdTopology makes the topology the test's alone until it ends: `go test
// ./...` runs packages at once, and a test that kills a primary or fails it
// over (e2e's scale-out, waitingroom's held request across a failover)
// would take the topology from under another package's test. The lock is a
// file lock in the temp directory, so it holds across test binaries, and
// the kernel drops it with a binary that dies.
func holdTopology(t testing.TB, name string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Clean(filepath.Join(os.TempDir(), "seckill-topology-"+name+".lock")), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("testenv: the %s topology's lock: %v", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("testenv: the %s topology's lock: %v", name, err)
	}
	t.Cleanup(func() { _ = f.Close() }) // closing the file releases the lock
}
