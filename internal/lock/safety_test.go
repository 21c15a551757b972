package lock_test

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestMutualExclusion runs many goroutines through one lock; some holders
// outlive the TTL, as the incident's 30 s HTTP call outlived a 10 s lock. A
// holder of this package stops when its lease context ends; naive holders
// have nothing telling them to. Each holder's time is from its grant to its
// unlock, or to its lease's deadline if that is sooner: a holder that the
// scheduler has not run since its lease ended holds nothing (on a starved
// machine a counter of holders inside read 1 overlap in 200 grants for this
// package, measuring the scheduler rather than the lock).
func TestMutualExclusion(t *testing.T) {
	impls := []implementation{
		{"lock", newOurs(&lock.Options{DriftFactor: 0.3}), false},
		{"level2", newLevel2, true},
		{"level3", newLevel3, true},
	}
	const (
		workers = 8
		rounds  = 25
		ttl     = 100 * time.Millisecond
	)
	eachImpl(t, impls, func(t *testing.T, impl implementation, m mutex, key string) {
		var mu sync.Mutex
		var holds []hold
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for round := 0; round < rounds; {
					h, err := m.tryLock(t.Context(), key, ttl)
					if err != nil {
						time.Sleep(time.Millisecond)
						continue
					}
					granted := time.Now()
					round++
					work := time.Duration(1+mathrand.IntN(3)) * time.Millisecond
					if (w+round)%10 == 0 {
						work = 2 * ttl // the slow dependency
					}
					select {
					case <-time.After(work):
					case <-h.ctx.Done():
					}
					ended := time.Now()
					if d, ok := h.ctx.Deadline(); ok && d.Before(ended) {
						ended = d
					}
					mu.Lock()
					holds = append(holds, hold{granted, ended})
					mu.Unlock()
					_ = h.unlock(context.Background())
				}
			})
		}
		wg.Wait()
		n := overlapping(holds)
		check(t, impl, n > 0, fmt.Sprintf("overlaps %d in %d grants", n, len(holds)))
	})
}

// hold is one holder's time with the lock.
type hold struct{ granted, ended time.Time }

// overlapping counts the holds granted before an earlier hold ended.
func overlapping(holds []hold) int {
	slices.SortFunc(holds, func(a, b hold) int { return a.granted.Compare(b.granted) })
	n := 0
	var last time.Time
	for _, h := range holds {
		if h.granted.Before(last) {
			n++
		}
		if h.ended.After(last) {
			last = h.ended
		}
	}
	return n
}

// TestExpiredHolderReleaseKeepsNewHolder: A's lock expires, B takes it, then
// A releases. B must still hold it.
func TestExpiredHolderReleaseKeepsNewHolder(t *testing.T) {
	impls := []implementation{
		{"lock", newOurs(nil), false},
		{"level2", newLevel2, true},
		{"level3", newLevel3, false},
	}
	const ttl = 50 * time.Millisecond
	eachImpl(t, impls, func(t *testing.T, impl implementation, m mutex, key string) {
		a, err := m.tryLock(t.Context(), key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * ttl)
		if _, err := m.tryLock(t.Context(), key, time.Minute); err != nil {
			t.Fatalf("B could not take the expired lock: %v", err)
		}
		_ = a.unlock(t.Context()) // A comes back late and releases
		_, err = m.tryLock(t.Context(), key, time.Minute)
		check(t, impl, err == nil, "C got the lock B holds after A's late release: "+boolString(err == nil))
	})
}

// TestCrashedHolderDoesNotBlockForEver: a holder that never releases blocks
// others only until its TTL.
func TestCrashedHolderDoesNotBlockForEver(t *testing.T) {
	impls := []implementation{
		{"lock", newOurs(nil), false},
		{"level1", newLevel1, true},
		{"level2", newLevel2, false},
	}
	const ttl = 50 * time.Millisecond
	eachImpl(t, impls, func(t *testing.T, impl implementation, m mutex, key string) {
		if _, err := m.tryLock(t.Context(), key, ttl); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * ttl)
		_, err := m.tryLock(t.Context(), key, ttl)
		check(t, impl, err != nil, "lock still blocked 3 TTLs after its holder vanished: "+boolString(err != nil))
	})
}

// TestTimedOutButSucceeded is incident B: the acquire lands in Redis but its
// reply arrives after the client's read timeout. This package must either
// recognise the lock as held or clean it up, so the same user can lock again
// at once; a lock without recovery (level 3) leaves it stranded for the TTL.
func TestTimedOutButSucceeded(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	const (
		ttl        = 30 * time.Second
		readTimout = 100 * time.Millisecond
		delay      = 2 * time.Second // longer than every lookup: the outcome stays unknown
		allowed    = 2 * time.Second // to lock again; far below the TTL
	)
	impls := []implementation{
		{"lock", newOurs(&lock.Options{ReleaseTimeout: 300 * time.Millisecond}), false},
		{"level3", newLevel3, true},
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			rdb, proxy := testenv.ProxiedRedis(t, readTimout)
			m := impl.new(rdb)
			if c, ok := m.(ours); ok {
				defer c.c.Close()
			}
			key := prefix + impl.name + ":{user:1}:lock"

			proxy.SetReplyDelay(delay)
			_, err := m.tryLock(t.Context(), key, ttl)
			if err == nil {
				t.Fatal("acquire succeeded through a proxy delaying replies past the read timeout")
			}
			t.Logf("acquire: %v", err)
			if impl.name == "lock" && !errors.Is(err, lock.ErrUnknownOutcome) {
				t.Errorf("err = %v, want ErrUnknownOutcome", err)
			}
			if pttl := direct.PTTL(t.Context(), key).Val(); pttl <= 0 {
				t.Fatalf("the acquire did not land (PTTL %v): the test shows nothing", pttl)
			}
			proxy.SetReplyDelay(0) // the network recovers

			start := time.Now()
			var again held
			for time.Since(start) < allowed {
				if again, err = m.tryLock(t.Context(), key, ttl); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			took := time.Since(start)
			stranded := err != nil
			if !stranded {
				_ = again.unlock(t.Context())
			}
			check(t, impl, stranded, "locked again after "+took.Round(time.Millisecond).String()+
				"; stranded: "+boolString(stranded)+"; PTTL left "+direct.PTTL(t.Context(), key).Val().String())
		})
	}
}

func boolString(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
