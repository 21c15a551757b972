package lock_test

import (
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestFencesStrictlyIncrease(t *testing.T) {
	rdb := testenv.Redis(t)
	key := testenv.Prefix(t) + "{act:1}:lock"
	c := lock.New(rdb, nil)
	grants := 10000
	if testenv.Short() {
		grants = 1000
	}
	var last int64
	for i := range grants {
		l, err := c.Obtain(t.Context(), key, time.Second, nil)
		if err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
		if l.Fence() <= last {
			t.Fatalf("grant %d: fence %d after %d", i, l.Fence(), last)
		}
		last = l.Fence()
		if err := l.Release(t.Context()); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
	}
	t.Logf("%d grants, last fence %d", grants, last)
}

// TestSeedFence: after Redis loses the counter, seeding it from the highest
// fence the database has seen keeps fences going up; seeding never lowers it.
func TestSeedFence(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	key := prefix + "{act:2}:lock"
	c := lock.New(rdb, nil)
	obtain := func() int64 {
		t.Helper()
		l, err := c.Obtain(t.Context(), key, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(t.Context())
		return l.Fence()
	}
	for range 5 {
		obtain()
	}
	highest := obtain() // what the database saw
	testenv.DeletePrefix(t, rdb, prefix)
	if f := obtain(); f > highest {
		t.Fatalf("without seeding the fence went on to %d: the test cannot show seeding matters", f)
	}
	if err := c.SeedFence(t.Context(), key, highest); err != nil {
		t.Fatal(err)
	}
	if f := obtain(); f <= highest {
		t.Errorf("after SeedFence(%d) the fence is %d", highest, f)
	}
	if err := c.SeedFence(t.Context(), key, 1); err != nil {
		t.Fatal(err)
	}
	if f := obtain(); f <= highest+1 {
		t.Errorf("SeedFence lowered the counter: fence %d", f)
	}
}
