package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// After the heal of a Redis primary's kill or pause, a WAIT for a replica
// (SECKILL_REDIS_WAIT_REPLICAS) fails until a replica is back online: the
// restarted or demoted node copies the primary's data first. The service's
// 503 then is the contract's answer, caused by that fault; the checks see
// it through a window of its own, from the heal until every primary has a
// replica online again.
const (
	resync  = "redis-resync"
	resyncN = 2_000_000
	// resyncWithin bounds the wait for the replica: past it the window
	// closes anyway, and what still fails is counted.
	resyncWithin = 30 * time.Second
)

var errNoReplica = errors.New("chaos: no replica online")

// redisResync records that Redis, healed at from, had a replica online on
// every primary again at to.
func (h *History) redisResync(from, to time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resyncs++
	n, name := resyncN+h.resyncs, fmt.Sprintf("%s for %v", resync, to.Sub(from).Round(time.Millisecond))
	h.faults = append(h.faults, FaultEvent{At: from, Fault: name, N: n, Kind: resync},
		FaultEvent{At: to, Fault: name, N: n, Kind: resync, Heal: true})
}

// awaitResync records the resync window of a Redis fault healed at from.
func (in *injector) awaitResync(ctx context.Context, from time.Time) {
	for time.Since(from) < resyncWithin && ctx.Err() == nil && !replicasOnline(ctx, in.rdb) {
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	in.h.redisResync(from, time.Now())
}

// replicasOnline reports whether every primary has a replica online, as a
// WAIT for one replica needs.
func replicasOnline(ctx context.Context, rdb redis.UniversalClient) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	online := func(ctx context.Context, c *redis.Client) error {
		rep, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(rep, "state=online") {
			return errNoReplica
		}
		return nil
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, online) == nil
	case *redis.Client:
		return online(ctx, c) == nil
	}
	return true
}
