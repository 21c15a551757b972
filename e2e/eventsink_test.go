package e2e_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis sink down mid-sale, by a Sentinel failover under
// SECKILL_REDIS_WAIT_REPLICAS=1: two instances sell while the replica is
// stopped and cut off (the primary takes stream appends it cannot
// replicate: WAIT answers 0, and the relays do not mark those events
// sent), then the primary is SIGKILLed and Sentinel promotes the replica,
// which lacks the primary's last appends. With one replica required, the
// stream (and the sale) is down until the old primary rejoins as the new
// one's replica, 10 s after the kill; then the sale goes on to sold out.
// Once the relays have drained the outbox, the stream on the new primary
// holds, after dedupe by id, every order's status history as the database
// has it, in sequence order: nothing lost.
//
// Can fail: without the WAIT after the appends (RedisSink.Send), the
// events appended to the old primary alone are marked sent and lost with
// it; with rows marked sent whatever the sink answered (relay.Step), so are
// the sends the dead primary refused: "order ...: events [], the outbox's
// [order.created]".
func TestSentinelFailoverLosesNoEvent(t *testing.T) {
	s := topologyStack(t, "sentinel")
	env := s.topologyEnv(map[string]string{
		"SECKILL_REDIS_WAIT_REPLICAS": "1", "SECKILL_REDIS_WAIT_TIMEOUT": "200ms", "SECKILL_LOCK_WAIT": "300ms",
	})
	_, procs := startInstances(t, s, 2, env)
	const total = 400
	act := s.createActivity(total)
	primary := s.rdb.(*redis.Client)
	pid := serverPID(t, primary)
	restored := false
	t.Cleanup(func() {
		if !restored {
			restartTopology(t, "sentinel")
		}
	})

	stop := make(chan struct{})
	bursts := startSales(s, procs, []int64{act}, stop)
	s.waitForOrders([]int64{act}, total/4, time.Minute)

	// The replica misses the primary's last appends: stopped and its link
	// cut for a second while the relays append, then the primary dies and
	// the replica wakes to find it gone (stopped well under Sentinel's
	// down-after, it is still fit to take over).
	killPrimaryAheadOfReplica(t, primary, pid, time.Second)
	killed := time.Now()
	// The promoted replica has no replica of its own until the old primary
	// rejoins: every WAIT for one answers 0, so the sink (and the sale,
	// which WAITs too) is down until then. It rejoins 10 s after the kill.
	time.Sleep(sinkDown)
	restartTopology(t, "sentinel")
	restored = true

	attempts := awaitSoldOut(t, bursts, stop)
	waitEventsSent(t, s.db, act, 2*time.Minute)
	drained := time.Since(killed)
	got, entries := streamEvents(t, s.rdb, s.prefix+"events", act)
	history := checkEventHistory(t, s.db, act, got)
	t.Logf("outbox drained %v after the SIGKILL; %d orders, %d stream entries; answers %v", drained.Round(100*time.Millisecond), len(history), entries, summary(attempts))
}

// sinkDown is how long the sink stays down mid-sale: the 10 s.
const sinkDown = 10 * time.Second
