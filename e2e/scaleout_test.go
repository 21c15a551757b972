package e2e_test

// Scale-out: service processes on a Redis Cluster and on a Sentinel-managed
// primary (scripts/services.sh topologies starts both on loopback; these
// tests skip when SECKILL_TEST_REDIS_CLUSTER_URL / _SENTINEL_URL are unset),
// and a Redis failover in the middle of a sale.

import (
	"context"
	"fmt"
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
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// resumeBound is how long after a primary's SIGKILL the sale of its
// activities must be selling again, with nobody's help. Measured on a
// loaded 2-core box with 2 s node timeouts (docs/DEPLOY.md): 3.2-5.7 s in
// the cluster and 2.8-3.4 s under Sentinel; the bound is loose on purpose.
const resumeBound = 30 * time.Second

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

// at returns a copy of the stack pointed at a process.
func (s *stack) at(p *process) *stack {
	c := *s
	c.url = p.url
	return &c
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

// A Redis Cluster primary holding hot activities is killed with SIGKILL in
// the middle of a sale through three service processes, just after it lost
// its replica's link, so the replica that takes over misses its last writes
// (lock grants, fence increments, deducts): what an asynchronous failover
// does. Nothing is oversold, every 201 has its row, the sale of the dead
// primary's activities resumes by itself within resumeBound, and reconcile
// brings the books to orders + remaining == total.
//
// Can fail: with the claim's `sold + k <= total_stock` made always true, the
// units Redis shows beyond the truth are refused by the schema's CHECK
// instead, as 503s, and the sale never ends: "not sold out 2 minutes after
// the failover" (docs/FAULTS.md). Without the fence reseed it still passes:
// the counter catches up one refused batch at a time, and the 503s logged
// after the kill show the cost (TestFailoverLeavesRedisBehind shows the
// reseed itself).
func TestClusterFailoverMidSale(t *testing.T) {
	s := topologyStack(t, "cluster")
	cc := s.rdb.(*redis.ClusterClient)
	failoverMidSale(t, s, 3, func(hot int64) (victim *redis.Client) {
		node, err := cc.MasterForKey(context.Background(), keys.NewSpace(s.prefix).Stock(hot))
		if err != nil {
			t.Fatal(err)
		}
		return node
	}, func() {
		restartTopology(t, "cluster")
		// A reload of the test's slot map, in the background; commands
		// meanwhile follow MOVED replies to the new primary.
		cc.ReloadState(context.Background())
	})
}

// The same failover under Sentinel: the primary is killed, the Sentinels
// promote its replica, and the service processes follow.
//
// Can fail: as TestClusterFailoverMidSale. Without the fence reseed it passed
// with 139 answers 503 instead of 12 (docs/FAULTS.md).
func TestSentinelFailoverMidSale(t *testing.T) {
	s := topologyStack(t, "sentinel")
	failoverMidSale(t, s, 2, func(int64) *redis.Client { return s.rdb.(*redis.Client) }, func() {
		restartTopology(t, "sentinel")
	})
}

// failoverMidSale runs a sale of activities through procs processes, kills
// the Redis primary that primaryOf names for the first activity, checks
// what the buyers saw and the books, and restores the topology (restore).
func failoverMidSale(t *testing.T, s *stack, procs int, primaryOf func(hot int64) *redis.Client, restore func()) {
	env := s.topologyEnv(map[string]string{"SECKILL_LOCK_WAIT": "300ms"})
	ps := make([]*process, procs)
	for i := range ps {
		ps[i] = spawn(t, env)
	}
	for _, p := range ps {
		p.waitReady()
	}
	s.url = ps[0].url
	const total = 200
	var ids []int64
	for range 6 {
		ids = append(ids, s.createActivity(total))
	}
	victim := primaryOf(ids[0])
	ctx := context.Background()
	var hot []int64 // the activities the victim serves
	for _, id := range ids {
		if p := primaryOf(id); p.Options().Addr == victim.Options().Addr {
			hot = append(hot, id)
		}
	}
	info, err := victim.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	pid := infoField(t, info, "process_id")
	victimAddr := victim.Options().Addr
	restored := false
	t.Cleanup(func() {
		if !restored {
			restore()
		}
	})

	stop := make(chan struct{})
	var bursts []*burst
	for i, p := range ps {
		bursts = append(bursts, startSale(s.client, p.url, ids, 4, int64(i)*10_000_000, stop))
	}
	s.waitForOrders(hot, total/4, time.Minute)

	// The replica misses the primary's last writes, as an asynchronous
	// replica can: it is stopped, its link cut (it cannot reconnect while
	// stopped), the sale writes on for a moment, the primary dies, and the
	// replica wakes to find it gone. Stopped for well under the node
	// timeout, it is still fit to take over.
	replica := replicaPID(t, victim)
	if err := syscall.Kill(replica, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := victim.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		_ = syscall.Kill(replica, syscall.SIGCONT)
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	err = syscall.Kill(int(pid), syscall.SIGKILL)
	_ = syscall.Kill(replica, syscall.SIGCONT)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	t.Logf("SIGKILL to the primary at %s (pid %d), serving activities %v of %v", victimAddr, pid, hot, ids)

	// Sales of the hot activities must resume by themselves.
	resumed := map[int64]time.Duration{}
	for deadline := killed.Add(resumeBound); time.Now().Before(deadline) && len(resumed) < len(hot); time.Sleep(100 * time.Millisecond) {
		for _, b := range bursts {
			b.mu.Lock()
			for _, a := range b.attempts {
				if a.err == nil && a.status == http.StatusCreated && a.sent.After(killed) && slices.Contains(hot, a.activity) {
					if d, ok := resumed[a.activity]; !ok || a.answered.Sub(killed) < d {
						resumed[a.activity] = a.answered.Sub(killed)
					}
				}
			}
			b.mu.Unlock()
		}
	}
	// The sale goes on until every buyer is told sold out. Redis may show
	// more units than the truth (deducts lost with the primary): the
	// database guard must refuse those.
	soldOut := make(chan struct{})
	go func() {
		for _, b := range bursts {
			b.wg.Wait()
		}
		close(soldOut)
	}()
	select {
	case <-soldOut:
	case <-time.After(2 * time.Minute):
		t.Errorf("not sold out 2 minutes after the failover")
	}
	close(stop)
	var attempts []attempt
	for _, b := range bursts {
		attempts = append(attempts, b.finish()...)
	}
	for _, id := range hot {
		if d, ok := resumed[id]; ok {
			t.Logf("activity %d: first sale %v after the SIGKILL", id, d.Round(10*time.Millisecond))
		} else {
			t.Errorf("activity %d: no 201 within %v of the failover", id, resumeBound)
		}
	}
	refused := 0 // 503s for the dead primary's activities after the kill
	for _, a := range attempts {
		if a.err == nil && a.status == http.StatusServiceUnavailable && a.sent.After(killed) && slices.Contains(hot, a.activity) {
			refused++
		}
	}
	t.Logf("answers %v; %d answered 503 for %v after the kill", summary(attempts), refused, hot)

	restore()
	restored = true
	for _, id := range ids {
		a := s.audit(id)
		if a.Oversold || a.Orders > total {
			t.Errorf("activity %d oversold: %+v", id, a)
		}
		if !a.Consistent {
			t.Logf("activity %d after the sale: %d orders + %d in Redis != %d (writes lost with the primary); reconcile", id, a.Orders, a.RedisRemaining, total)
		}
		if before, after := reconcileCommand(t, env, id); before != after {
			t.Logf("activity %d: reconcile moved Redis from %d to %d", id, before, after)
		}
		s.checkBooksDirect(id, total, created(attempts, id))
	}
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

// startSale is startBurst for a whole sale: each worker buys, as a new user
// every time, the activities not yet sold out to it, and stops when all are
// (or stop is closed).
func startSale(client *http.Client, url string, activities []int64, workers int, firstUser int64, stop <-chan struct{}) *burst {
	return buyers(client, url, activities, workers, firstUser, stop, true)
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
	server, err := rdb.Info(ctx, "server").Result()
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

// What a Redis failover can leave behind, made exactly: the promoted replica
// missed the primary's last writes, so the activity's fence counter is
// behind the fence the database last accepted, and a deduct that was
// acknowledged (its order written) is gone, so Redis shows one unit more
// than the truth.
//
// The fence: the first batch after the failover is refused as stale (503)
// and raises the counter past the database's; the next buyer buys.
// The lost deduct: the audit shows orders + remaining == total + 1;
// reconcile sets Redis back to the truth; without reconcile the database
// guard still stops the sale at exactly the total, the extra unit's buyer
// being told sold_out.
//
// Can fail: with the fence reseed of purchase.afterFailedWrite removed, the
// buyers after the first are refused too, one stale batch per fence lost:
// "buyer 7 after the failover: 503 unavailable, want 201".
func TestFailoverLeavesRedisBehind(t *testing.T) {
	s := newStack(t, stackOptions{})
	ctx := context.Background()
	const total, before = 10, 5
	for _, reconcile := range []bool{true, false} {
		id := s.createActivity(total)
		for u := int64(1); u <= before; u++ {
			if r := s.buy(id, u, nil); r.status != http.StatusCreated {
				t.Fatalf("buyer %d: %d %s", u, r.status, r.raw)
			}
		}
		// The failover: the fence counter and the last deduct are lost.
		fenceKey, err := lock.FenceKey(keys.NewSpace(s.prefix).Lock(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.rdb.Set(ctx, fenceKey, 1, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := s.rdb.HIncrBy(ctx, keys.NewSpace(s.prefix).Stock(id), "remaining", 1).Err(); err != nil {
			t.Fatal(err)
		}

		if r := s.buy(id, before+1, nil); r.status != http.StatusServiceUnavailable {
			t.Errorf("buyer %d, first after the failover: %d %s, want 503 (stale fence)", before+1, r.status, r.raw)
		}
		if r := s.buy(id, before+2, nil); r.status != http.StatusCreated {
			t.Fatalf("buyer %d after the failover: %d %s, want 201", before+2, r.status, r.raw)
		}
		a := s.audit(id)
		if a.Consistent || a.Orders+a.RedisRemaining != total+1 {
			t.Errorf("audit after the lost deduct %+v: want orders + remaining == total + 1", a)
		}
		if reconcile {
			if r := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/reconcile", id), nil, admin()); r.status != http.StatusOK {
				t.Fatalf("reconcile: %d %s", r.status, r.raw)
			}
			if a := s.audit(id); !a.Consistent {
				t.Errorf("audit after reconcile %+v", a)
			}
		}
		res := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, id, 10, 2, 100)
		if n := len(s.ordersInDB(id)); n != total {
			t.Errorf("reconcile %v: %d orders, want exactly %d: %v", reconcile, n, total, res.statuses)
		}
		s.checkBooks(id, total, res)
		t.Logf("reconcile %v: answers after the failover %v", reconcile, res.statuses)
	}
}
