package lock_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// A failover that lost a refence (the counter's INCR and the key's new
// value, as a replica promoted before they reached it) does not make the
// holder's next refence give it a fence, and so a value, it already had.
// Can fail: refence.lua issuing the counter's next value alone gives the
// lost fence again, and two batches of one hold share a deduct receipt
// (internal/purchase TestFailoverNeverGivesTwoBatchesOneReceipt).
func TestRefenceNeverRepeatsAFenceAfterAFailover(t *testing.T) {
	rdb := testenv.Redis(t)
	key := testenv.Prefix(t) + "{f}:lock"
	c := lock.New(rdb, nil)
	l, err := c.Obtain(t.Context(), key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(t.Context())
	before, beforeValue := l.Fence(), l.Value()
	lost, err := l.Refence(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lostValue := l.Value()
	fenceKey, err := lock.FenceKey(key)
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(t.Context(), fenceKey, before, 0)
	rdb.SetArgs(t.Context(), key, beforeValue, redis.SetArgs{KeepTTL: true})

	next, err := l.Refence(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if next <= lost || l.Value() == lostValue {
		t.Errorf("refence after the failover gave fence %d (value %q); the lost one was %d (%q): want a greater one", next, l.Value(), lost, lostValue)
	}
	if n, _ := rdb.Get(t.Context(), fenceKey).Int64(); n < next {
		t.Errorf("counter %d below the fence %d it issued", n, next)
	}
}
