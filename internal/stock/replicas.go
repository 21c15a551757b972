package stock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/luascript"
)

var (
	// ErrNotReplicated is returned by the Wait methods when fewer replicas
	// than asked acknowledged the write within the timeout. The write may
	// still reach them, or be lost in a failover.
	ErrNotReplicated = errors.New("stock: write not acknowledged by enough replicas")
	// ErrWriteGone is returned by the Wait methods when the primary of the
	// activity's slot no longer holds the write: a failover lost it.
	ErrWriteGone = errors.New("stock: write not found on the activity's primary")
)

var replicateScript = luascript.Load(luaFiles, "replicate.lua")

// markerTTL is how long an activity's replication marker lives; it only has
// to outlive the WAIT that follows its write.
const markerTTL = time.Minute

// WaitGrant waits until at least replicas replicas hold the lock grant whose
// lock value is lockValue (lock.Lock.Value), or timeout passes: then
// ErrNotReplicated. ErrWriteGone: the grant is not on the primary.
func (s *Store) WaitGrant(ctx context.Context, activityID int64, lockValue string, replicas int, timeout time.Duration) error {
	return s.waitReplicas(ctx, activityID, s.space.Lock(activityID), lockValue, replicas, timeout)
}

// WaitDeduct waits until at least replicas replicas hold the deduct of grant
// g (its receipt), or timeout passes: then ErrNotReplicated.
// ErrWriteGone: the deduct is not on the primary.
func (s *Store) WaitDeduct(ctx context.Context, activityID int64, g Grant, replicas int, timeout time.Duration) error {
	return s.waitReplicas(ctx, activityID, s.receipt(activityID, g), "", replicas, timeout)
}

// waitReplicas runs the marker script and WAIT in one pipeline, so on one
// connection: WAIT waits for that connection's last write only, and a WAIT
// sent on any other pooled connection would return at once. In a cluster
// the pipeline goes to the primary of the activity's slot
// (ClusterClient.MasterForKey): the cluster client routes a command by its
// first key, and WAIT has none.
func (s *Store) waitReplicas(ctx context.Context, activityID int64, vouched, value string, replicas int, timeout time.Duration) error {
	node, err := s.primaryFor(ctx, vouched)
	if err != nil {
		return fmt.Errorf("stock: wait for replicas of activity %d: %w", activityID, err)
	}
	// WAIT blocks for up to timeout: the connection's read deadline must
	// outlast it.
	node = node.WithTimeout(node.Options().ReadTimeout + timeout)
	pipe := node.Pipeline()
	vouch := replicateScript.Eval(ctx, pipe, []string{vouched, s.space.Activity(activityID, "replicated")}, value, markerTTL.Milliseconds())
	acked := pipe.Do(ctx, "WAIT", replicas, timeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("stock: wait for replicas of activity %d: %w", activityID, err)
	}
	if ok, _ := vouch.Int64(); ok != 1 {
		return fmt.Errorf("stock: wait for replicas of activity %d: %w", activityID, ErrWriteGone)
	}
	n, err := acked.Int64()
	switch {
	case err != nil:
		return fmt.Errorf("stock: wait for replicas of activity %d: %w", activityID, err)
	case n < int64(replicas):
		return fmt.Errorf("stock: %d of %d replicas of activity %d within %v: %w", n, replicas, activityID, timeout, ErrNotReplicated)
	}
	return nil
}

// primaryFor returns the client of the node that holds key's slot as
// primary: the cluster's node for it, or the one client of a single node or
// of a Sentinel-managed primary.
func (s *Store) primaryFor(ctx context.Context, key string) (*redis.Client, error) {
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("WAIT needs a *redis.Client or *redis.ClusterClient, not %T", s.rdb)
}
