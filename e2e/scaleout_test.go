package e2e_test

import (
	"context"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Scale-out: service processes on a Redis Cluster and on a Sentinel-managed
// primary (scripts/services.sh topologies starts both on loopback; these
// tests skip when SECKILL_TEST_REDIS_CLUSTER_URL / _SENTINEL_URL are unset);
// a Redis failover in the middle of a sale is failover_test.go's.

// topologyStack is a process stack whose services and direct Redis client
// run on the cluster ("cluster") or Sentinel ("sentinel") of the test
// environment, under a key prefix of the test's own.
func topologyStack(t *testing.T, mode string) *stack {
	t.Helper()
	var url string
	var rdb redis.UniversalClient
	var prefix string
	switch mode {
	case "cluster":
		url = testenv.RedisClusterURL(t)
		rdb, prefix = testenv.RedisCluster(t)
	case "sentinel":
		url = testenv.RedisSentinelURL(t)
		rdb, prefix = testenv.RedisSentinel(t)
	}
	s := newProcessStack(t, usercheck.StubConfig{Latency: time.Millisecond})
	s.rdb, s.prefix = rdb, prefix
	s.topology = map[string]string{"SECKILL_REDIS_MODE": mode, "SECKILL_REDIS_URL": url}
	return s
}

// topologyEnv is processEnv on the stack's topology.
func (s *stack) topologyEnv(overrides map[string]string) []string {
	vars := map[string]string{}
	for k, v := range s.topology {
		vars[k] = v
	}
	for k, v := range overrides {
		vars[k] = v
	}
	return s.processEnv(vars)
}

// A sale of 20 activities, spread over the cluster's three primaries,
// through three service processes (the third WAITs for one replica after
// its grants and deducts, which only works when the WAIT reaches the
// primary of each activity's slot): exactly the stock is sold, the books
// balance in SQL and Redis, nobody holds two orders, and a buyer who bought
// through one instance is refused by the next.
func TestClusterSaleAcrossPrimaries(t *testing.T) {
	s := topologyStack(t, "cluster")
	env := s.topologyEnv(nil)
	procs := []*process{spawn(t, env), spawn(t, env), spawn(t, s.topologyEnv(map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "1"}))}
	for _, p := range procs {
		p.waitReady()
	}
	instances := []*stack{s.at(procs[0]), s.at(procs[1]), s.at(procs[2])}
	s.url = procs[0].url

	const activities, total, buyers = 20, 6, 10
	ids := make([]int64, activities)
	primaries := map[string][]int64{}
	cc := s.rdb.(*redis.ClusterClient)
	for i := range ids {
		ids[i] = s.createActivity(total)
		node, err := cc.MasterForKey(context.Background(), keys.NewSpace(s.prefix).Stock(ids[i]))
		if err != nil {
			t.Fatal(err)
		}
		primaries[node.Options().Addr] = append(primaries[node.Options().Addr], ids[i])
	}
	if len(primaries) != 3 {
		t.Fatalf("activities on %d primaries, want all 3: %v", len(primaries), primaries)
	}

	primaryOf := map[int64]string{}
	for addr, acts := range primaries {
		for _, id := range acts {
			primaryOf[id] = addr
		}
	}
	var n atomic.Int64
	var twice, perInstance [3]atomic.Int64
	var waitingSoldOn sync.Map // primaries whose activities the WAITing instance sold
	results := make([]*saleResult, activities)
	done := make(chan int)
	for k, id := range ids {
		go func() {
			results[k] = runSale(t, func(a, u int64) response {
				i := n.Add(1) % 3
				r := instances[i].buy(a, u, nil)
				if r.status == http.StatusCreated {
					perInstance[i].Add(1)
					if i == 2 {
						waitingSoldOn.Store(primaryOf[a], true)
					}
					// The same buyer through the next instance: refused
					// (already_purchased, or sold_out, which is checked first),
					// after any 429/503 the contract says to retry.
					if again := repeatUntilAnswered(instances[(i+1)%3], a, u); again.status != http.StatusConflict {
						twice[i].Add(1)
						t.Errorf("user %d bought activity %d through instance %d, then through %d: %d %s", u, a, i, (i+1)%3, again.status, again.raw)
					}
				}
				return r
			}, id, buyers, 2, 1)
			done <- k
		}()
	}
	for range ids {
		<-done
	}
	for k, id := range ids {
		if got := len(results[k].created); got != total {
			t.Errorf("activity %d: %d sold, want %d: %v", id, got, total, results[k].statuses)
		}
		s.checkBooks(id, total, results[k])
		s.checkBooksDirect(id, total, results[k].created)
	}
	sold := []int64{perInstance[0].Load(), perInstance[1].Load(), perInstance[2].Load()}
	if slices.Contains(sold, 0) {
		t.Errorf("an instance sold nothing: %v", sold)
	}
	// Its WAIT must reach the primary of every activity's slot.
	for addr := range primaries {
		if _, ok := waitingSoldOn.Load(addr); !ok {
			t.Errorf("the instance that WAITs for a replica sold nothing of the activities on %s", addr)
		}
	}
	t.Logf("activities per primary %v; orders per instance %v (the third WAITs for 1 replica)", primaries, sold)
}

// repeatUntilAnswered buys again as a buyer who already bought would, through
// s, retrying 429 busy and 503 (nothing sold, try again) as an app does, for
// at most saleDeadline: on a loaded machine a batch may not take the repeat
// within the queue wait.
func repeatUntilAnswered(s *stack, activity, user int64) response {
	deadline := time.Now().Add(saleDeadline)
	for step := 10 * time.Millisecond; ; step = min(2*step, time.Second) {
		r := s.buy(activity, user, nil)
		if r.status != http.StatusTooManyRequests && r.status != http.StatusServiceUnavailable || !time.Now().Before(deadline) {
			return r
		}
		time.Sleep(step)
	}
}

// restartTopology starts again whatever node of the test topology is down
// (the killed primary rejoins as a replica) and waits until it is whole.
func restartTopology(t *testing.T, which string) {
	t.Helper()
	out, err := exec.Command("bash", "../scripts/services.sh", which).CombinedOutput()
	if err != nil {
		t.Errorf("restore the %s: %v\n%s", which, err, out)
	}
}

// replicaPID returns the process id of the primary's (first) replica,
// waiting for one to be attached: after an earlier failover test the old
// primary rejoins as a replica within seconds.
func replicaPID(t *testing.T, primary *redis.Client) int {
	t.Helper()
	ctx := context.Background()
	var port, info string
	for deadline := time.Now().Add(30 * time.Second); port == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if info, err = primary.Info(ctx, "replication").Result(); err != nil {
			t.Fatal(err)
		}
		port = replicaPort(info)
	}
	if port == "" {
		t.Fatalf("the primary has no replica after 30 s:\n%s", info)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port})
	defer rdb.Close()
	return serverPID(t, rdb)
}

// serverPID returns the process id of the Redis server rdb talks to.
func serverPID(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	server, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	return int(infoField(t, server, "process_id"))
}

// replicaPort reads the first online replica's port from INFO replication.
func replicaPort(info string) string {
	for line := range strings.SplitSeq(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "slave0:")
		if !ok || !strings.Contains(v, "state=online") {
			continue
		}
		for kv := range strings.SplitSeq(v, ",") {
			if p, ok := strings.CutPrefix(kv, "port="); ok {
				return p
			}
		}
	}
	return ""
}

// infoField reads an integer field of an INFO reply.
func infoField(t *testing.T, info, name string) int64 {
	t.Helper()
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in INFO", name)
	return 0
}

// WAIT under Sentinel: with the one replica asked for, the sale sells
// exactly the stock; with two asked for (there is one), every WAIT after a
// grant times out, every buyer is told 503 and nothing is sold. When the
// replica stops between a batch's grant and its deduct (the user-check stub
// stops it while it verifies), the WAIT after the deduct times out: the
// batch's buyers are told 503 and its units go back (settled at 0), so the
// books balance with nothing sold.
//
// Can fail: without the settle after a failed WAIT (purchase.sell), the
// units of that batch stay deducted: "activity N: 0 orders + 7 in Redis,
// total 8: books do not balance".
func TestSentinelWaitReplicas(t *testing.T) {
	s := topologyStack(t, "sentinel")
	replica := replicaPID(t, s.rdb.(*redis.Client))
	var stopped atomic.Bool
	t.Cleanup(func() {
		if stopped.Load() {
			_ = syscall.Kill(replica, syscall.SIGCONT)
		}
	})
	stopping := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stopped.CompareAndSwap(false, true) {
			_ = syscall.Kill(replica, syscall.SIGSTOP)
		}
		s.stub.ServeHTTP(w, r)
	}))
	for _, tc := range []struct {
		name, replicas, userCheck string
		sold                      int
	}{
		{"one replica", "1", s.stubURL, 8},
		{"more replicas than there are", "2", s.stubURL, 0},
		{"replica stops after the grant", "1", stopping, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProcess(t, s.topologyEnv(map[string]string{
				"SECKILL_REDIS_WAIT_REPLICAS": tc.replicas, "SECKILL_REDIS_WAIT_TIMEOUT": "50ms", "SECKILL_USERCHECK_URL": tc.userCheck,
			}))
			c := s.at(p)
			c.t = t
			const total = 8
			id := c.createActivity(total)
			res := &saleResult{created: map[string]int64{}, statuses: map[string]int{}}
			for u := int64(1); u <= 12; u++ {
				res.add(c.buy(id, u, nil))
			}
			if stopped.CompareAndSwap(true, false) {
				_ = syscall.Kill(replica, syscall.SIGCONT)
			}
			if len(res.created) != tc.sold {
				t.Errorf("%d sold, want %d: %v", len(res.created), tc.sold, res.statuses)
			}
			if tc.sold == 0 && res.statuses["unavailable"] != 12 {
				t.Errorf("answers %v, want 12 unavailable", res.statuses)
			}
			c.checkBooks(id, total, res)
			c.checkBooksDirect(id, total, res.created)
			t.Logf("answers %v", res.statuses)
		})
	}
}
