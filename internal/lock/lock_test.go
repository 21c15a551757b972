package lock_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// The safety tests run over this package and the three naive locks of the
// seed article (docs/SEEDS.md, "six levels"), each of which must be caught
// by at least one test: that is the evidence the tests can fail.

// mutex is what the safety tests need of a lock.
type mutex interface {
	tryLock(ctx context.Context, key string, ttl time.Duration) (held, error)
}

// held is a granted lock: ctx is the context the holder works under (the
// lease context, for this package) and unlock releases it.
type held struct {
	ctx    context.Context
	unlock func(context.Context) error
}

var errBusy = errors.New("busy")

type ours struct{ c *lock.Client }

func (m ours) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	l, err := m.c.Obtain(ctx, key, ttl, nil)
	if err != nil {
		return held{}, err
	}
	return held{ctx: l.Context(), unlock: l.Release}, nil
}

// level1 is SETNX + DEL: mutual exclusion only; a holder that never releases
// blocks everyone for ever.
type level1 struct{ rdb *redis.Client }

func (m level1) tryLock(ctx context.Context, key string, _ time.Duration) (held, error) {
	ok, err := m.rdb.SetNX(ctx, key, "1", 0).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return m.rdb.Del(ctx, key).Err() }}, nil
}

// level2 is SET NX PX + DEL: no deadlock, but the release deletes whatever
// lock is there, and nothing stops a holder that outlives its TTL.
type level2 struct{ rdb *redis.Client }

func (m level2) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	ok, err := m.rdb.SetNX(ctx, key, "1", ttl).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return m.rdb.Del(ctx, key).Err() }}, nil
}

// level3 is a random token with SET NX PX and a compare-and-delete release,
// but no answer to "the acquire timed out: do I hold it?".
type level3 struct{ rdb *redis.Client }

var cad = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (m level3) tryLock(ctx context.Context, key string, ttl time.Duration) (held, error) {
	token := rand.Text()
	ok, err := m.rdb.SetNX(ctx, key, token, ttl).Result()
	if err != nil || !ok {
		return held{}, errors.Join(errBusy, err)
	}
	return held{ctx: ctx, unlock: func(ctx context.Context) error { return cad.Run(ctx, m.rdb, []string{key}, token).Err() }}, nil
}

// implementation names a lock under test and whether the test must catch it.
type implementation struct {
	name   string
	new    func(rdb *redis.Client) mutex
	caught bool
}

func newOurs(opt *lock.Options) func(*redis.Client) mutex {
	return func(rdb *redis.Client) mutex { return ours{lock.New(rdb, opt)} }
}

func newLevel1(rdb *redis.Client) mutex { return level1{rdb} }
func newLevel2(rdb *redis.Client) mutex { return level2{rdb} }
func newLevel3(rdb *redis.Client) mutex { return level3{rdb} }

// check fails the test when the property's verdict disagrees with what is
// expected of impl: held for this package, violated for a naive lock.
func check(t *testing.T, impl implementation, violated bool, detail string) {
	t.Helper()
	switch {
	case violated && !impl.caught:
		t.Errorf("%s: property violated: %s", impl.name, detail)
	case !violated && impl.caught:
		t.Errorf("%s: naive lock not caught: the test cannot tell it from a safe one (%s)", impl.name, detail)
	case violated:
		t.Logf("%s caught as expected: %s", impl.name, detail)
	default:
		t.Logf("%s: %s", impl.name, detail)
	}
}

// eachImpl runs prop once per implementation, as a subtest, with that
// implementation on the test's Redis and a lock key of its own.
func eachImpl(t *testing.T, impls []implementation, prop func(t *testing.T, impl implementation, m mutex, key string)) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			prop(t, impl, impl.new(rdb), prefix+impl.name+":{me}:lock")
		})
	}
}

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

// TestTimedOutButSucceededIsRecognised: the reply of the acquire is late but
// the follow-up lookup gets through; Obtain returns the lock with its fence.
func TestTimedOutButSucceededIsRecognised(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	rdb, proxy := testenv.ProxiedRedis(t, 100*time.Millisecond)
	rdb.AddHook(liftDelayAfterTimeout{proxy})
	c := lock.New(rdb, nil)
	defer c.Close()
	key := prefix + "{user:2}:lock"

	proxy.SetReplyDelay(time.Second)
	l, err := c.Obtain(t.Context(), key, 30*time.Second, nil)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	if got := direct.Get(t.Context(), key+":fence").Val(); got != strconv.FormatInt(l.Fence(), 10) {
		t.Errorf("fence %d, counter %s", l.Fence(), got)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if n := direct.Exists(t.Context(), key).Val(); n != 0 {
		t.Errorf("lock still there after release")
	}
}

// liftDelayAfterTimeout ends the proxy's delays (replies and requests) as
// soon as a command fails, so that the lookup after a timed-out acquire gets
// through.
type liftDelayAfterTimeout struct{ p delays }

// delays is what liftDelayAfterTimeout needs of a proxy: Toxiproxy
// (internal/testkit/toxic) delivers what it held when a delay is lifted, while
// internal/testkit/faultproxy keeps each held command's delay.
type delays interface {
	SetReplyDelay(time.Duration)
	SetRequestDelay(time.Duration)
}

func (h liftDelayAfterTimeout) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h liftDelayAfterTimeout) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h liftDelayAfterTimeout) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil {
			// A read can time out at the context's deadline a moment before
			// the context reports it; lift the delay only once it has, so
			// the follow-up lookup sees the caller's deadline as passed.
			if _, ok := ctx.Deadline(); ok {
				<-ctx.Done()
			}
			h.p.SetReplyDelay(0)
			h.p.SetRequestDelay(0)
		}
		return err
	}
}

// TestCallerDeadlineDuringAcquire: the caller's context ends while the
// acquire is in flight. The error shows the deadline, and a lock that landed
// does not stay behind.
func TestCallerDeadlineDuringAcquire(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	rdb, proxy := testenv.ProxiedRedis(t, 5*time.Second)
	rdb.AddHook(liftDelayAfterTimeout{proxy})
	c := lock.New(rdb, nil)
	key := prefix + "{user:3}:lock"

	proxy.SetReplyDelay(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Obtain(ctx, key, 30*time.Second, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("err = %v, want ErrNotObtained and context.DeadlineExceeded", err)
	}
	if err := c.Close(); err != nil { // waits for the cleanup
		t.Fatal(err)
	}
	if n := direct.Exists(t.Context(), key).Val(); n != 0 {
		t.Errorf("a lock whose caller gave up is still held (PTTL %v)", direct.PTTL(t.Context(), key).Val())
	}
}

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

// TestLeaseContextEndsBeforeTheKey: the lease is timed from before the
// acquire was sent, so a slow reply cannot push it past the key's expiry.
func TestLeaseContextEndsBeforeTheKey(t *testing.T) {
	direct := testenv.Redis(t)
	key := testenv.Prefix(t) + "{act:3}:lock"
	rdb, proxy := testenv.ProxiedRedis(t, 5*time.Second)
	// A 42ms margin absorbs scheduling noise on a loaded machine, yet is far
	// below the 150ms a lease timed from the reply would overrun by.
	c := lock.New(rdb, &lock.Options{DriftFactor: 0.1})
	const ttl = 400 * time.Millisecond

	proxy.SetReplyDelay(150 * time.Millisecond) // the grant's reply is late
	l, err := c.Obtain(t.Context(), key, ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy.SetReplyDelay(0)
	if r := l.Remaining(); r > ttl-150*time.Millisecond {
		t.Errorf("Remaining %v right after a grant whose reply took 150ms of a %v TTL", r, ttl)
	}
	// The key expires at (when Redis ran PTTL) + pttl, which is no earlier
	// than before + pttl on this clock. Comparing deadlines, rather than
	// reading PTTL once the lease ended, keeps scheduling delays on a loaded
	// machine out of the verdict.
	before := time.Now()
	pttl, err := direct.PTTL(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	deadline, ok := l.Context().Deadline()
	if !ok {
		t.Fatal("lease context has no deadline")
	}
	if expiry := before.Add(pttl); !deadline.Before(expiry) {
		t.Errorf("the lease ends at %v, not before the key can expire at %v", deadline.Sub(before), pttl)
	}
	<-l.Context().Done()
	if !errors.Is(l.Context().Err(), context.DeadlineExceeded) {
		t.Errorf("lease Err = %v, want DeadlineExceeded", l.Context().Err())
	}
	if l.Remaining() != 0 {
		t.Errorf("Remaining %v after the lease ended", l.Remaining())
	}
	t.Logf("lease deadline %v before the key's earliest expiry", before.Add(pttl).Sub(deadline))
}

func TestReleaseOutcomes(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	c := lock.New(rdb, nil)

	t.Run("released on a cancelled context", func(t *testing.T) {
		key := prefix + "{a}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if rdb.Exists(t.Context(), key).Val() != 0 {
			t.Error("lock still there")
		}
		if !errors.Is(context.Cause(l.Context()), context.Canceled) {
			t.Errorf("lease cause %v", context.Cause(l.Context()))
		}
	})
	t.Run("expired", func(t *testing.T) {
		l, err := c.Obtain(t.Context(), prefix+"{b}:lock", 20*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if err := l.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) || !strings.Contains(err.Error(), "expired") {
			t.Errorf("err = %v, want ErrNotHeld (expired)", err)
		}
	})
	t.Run("held by another owner", func(t *testing.T) {
		key := prefix + "{c}:lock"
		l, err := c.Obtain(t.Context(), key, 20*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		other, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) || !strings.Contains(err.Error(), "another owner") {
			t.Errorf("err = %v, want ErrNotHeld (another owner)", err)
		}
		if err := other.Release(t.Context()); err != nil {
			t.Errorf("the other owner's release: %v", err)
		}
	})
	t.Run("contended", func(t *testing.T) {
		key := prefix + "{d}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(t.Context())
		if _, err := c.Obtain(t.Context(), key, time.Minute, nil); !errors.Is(err, lock.ErrNotObtained) {
			t.Errorf("err = %v, want ErrNotObtained", err)
		}
		start := time.Now()
		_, err = c.Obtain(t.Context(), key, time.Minute, &lock.ObtainOptions{Wait: 100 * time.Millisecond})
		if !errors.Is(err, lock.ErrNotObtained) || time.Since(start) < 100*time.Millisecond {
			t.Errorf("waited %v, err = %v; want ErrNotObtained after 100ms", time.Since(start), err)
		}
	})
	t.Run("wait gets the lock once freed", func(t *testing.T) {
		key := prefix + "{e}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(50*time.Millisecond, func() { _ = l.Release(context.Background()) })
		l2, err := c.Obtain(t.Context(), key, time.Minute, &lock.ObtainOptions{Wait: 2 * time.Second})
		if err != nil {
			t.Fatalf("Obtain with Wait: %v", err)
		}
		_ = l2.Release(t.Context())
	})
}

// renewTTL is the auto-renewed leases' TTL in TestExtend: a renewal every
// half second, with a second to spare, so a loaded machine's delays do not
// end a lease the test expects to last.
const renewTTL = 1500 * time.Millisecond

// TestExtend: Extend and auto-renewal move the lease.
func TestExtend(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rdb := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	c := lock.New(rdb, nil)

	t.Run("moves the lease", func(t *testing.T) {
		key := prefix + "{a}:lock"
		l, err := c.Obtain(t.Context(), key, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(t.Context())
		if err := l.Extend(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if r := l.Remaining(); r < 50*time.Second {
			t.Errorf("Remaining %v after extending to 1m", r)
		}
		time.Sleep(1500 * time.Millisecond)
		if l.Context().Err() != nil {
			t.Errorf("lease ended at its first deadline despite Extend: %v", context.Cause(l.Context()))
		}
		if pttl := rdb.PTTL(t.Context(), key).Val(); pttl < 50*time.Second {
			t.Errorf("PTTL %v after extending to 1m", pttl)
		}
	})
	t.Run("lost", func(t *testing.T) {
		key := prefix + "{b}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		rdb.Del(t.Context(), key) // Redis lost it
		if err := l.Extend(t.Context(), time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("err = %v, want ErrNotHeld", err)
		}
		if !errors.Is(context.Cause(l.Context()), lock.ErrNotHeld) {
			t.Errorf("lease cause %v, want ErrNotHeld", context.Cause(l.Context()))
		}
	})
	t.Run("auto-renew keeps the lock past its TTL and stops on release", func(t *testing.T) {
		key := prefix + "{c}:lock"
		l, err := c.Obtain(t.Context(), key, renewTTL, &lock.ObtainOptions{AutoRenew: true})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * renewTTL)
		if err := l.Context().Err(); err != nil {
			t.Fatalf("lease ended under auto-renew: %v", context.Cause(l.Context()))
		}
		if err := l.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("auto-renew ends the lease when the lock is lost", func(t *testing.T) {
		key := prefix + "{d}:lock"
		l, err := c.Obtain(t.Context(), key, renewTTL, &lock.ObtainOptions{AutoRenew: true})
		if err != nil {
			t.Fatal(err)
		}
		rdb.Set(t.Context(), key, "someone else", time.Minute)
		select {
		case <-l.Context().Done():
		case <-time.After(2 * renewTTL):
			t.Fatal("lease still running after the lock was taken over")
		}
		if !errors.Is(context.Cause(l.Context()), lock.ErrNotHeld) {
			t.Errorf("lease cause %v, want ErrNotHeld", context.Cause(l.Context()))
		}
		if err := l.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release: %v", err)
		}
	})
}

// TestLeaseContextChildren: deadlines derived from the lease end with it.
func TestLeaseContextChildren(t *testing.T) {
	rdb := testenv.Redis(t)
	c := lock.New(rdb, nil)
	l, err := c.Obtain(t.Context(), testenv.Prefix(t)+"{a}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	child, cancel := context.WithTimeout(l.Context(), time.Hour)
	defer cancel()
	if d, _ := child.Deadline(); time.Until(d) > time.Minute {
		t.Errorf("child deadline %v is past the lease", time.Until(d))
	}
	_ = l.Release(t.Context())
	select {
	case <-child.Done():
	case <-time.After(time.Second):
		t.Fatal("child context outlived the released lease")
	}
	if !errors.Is(context.Cause(child), context.Canceled) {
		t.Errorf("child cause %v", context.Cause(child))
	}
}

func boolString(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestAcquireLandingAfterItsLookupIsCleanedUp: the acquire times out on the
// client before it reaches Redis, the lookup finds no lock, and then the
// acquire lands (a TCP retransmit, a resend). The background cleanup Obtain
// starts on that branch too deletes the late lock; without it the key would
// be held by nobody for the whole TTL.
func TestAcquireLandingAfterItsLookupIsCleanedUp(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	const ttl = time.Minute
	rdb, proxy := testenv.DelayedRedis(t, 100*time.Millisecond)
	rdb.AddHook(liftDelayAfterTimeout{proxy})
	obs := &cleanups{}
	c := lock.New(rdb, &lock.Options{Observer: obs})
	defer c.Close()
	// Load obtain.lua into the script cache, so the late EVALSHA runs rather
	// than failing with NOSCRIPT.
	warm, err := c.Obtain(t.Context(), prefix+"{warm}:lock", ttl, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(t.Context())
	key := prefix + "{user:4}:lock"

	proxy.SetRequestDelay(500 * time.Millisecond)
	_, err = c.Obtain(t.Context(), key, ttl, nil)
	if !errors.Is(err, lock.ErrNotObtained) {
		t.Fatalf("Obtain: %v, want ErrNotObtained (the lookup found no lock)", err)
	}
	t.Logf("acquire: %v", err)

	// The fence counter moves when the late acquire lands.
	testenv.WaitFor(t, 10*time.Second, "the late acquire to land", func() bool {
		return direct.Exists(t.Context(), key+":fence").Val() == 1
	})
	start := time.Now()
	testenv.WaitFor(t, 10*time.Second, "the late lock to be cleaned up", func() bool {
		return direct.Exists(t.Context(), key).Val() == 0
	})
	t.Logf("late lock deleted %v after it landed or sooner", time.Since(start).Round(time.Millisecond))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := obs.results(); !slices.Contains(got, "released") {
		t.Errorf("cleanup results %v, want one \"released\"", got)
	}
}

// TestRetryAfterANotLandedAcquireKeepsItsLock: with Wait, Obtain tries
// again after an acquire that had not landed and gets the lock. The cleanup
// watching for the first attempt's late landing must not delete the lock
// the retry was granted.
func TestRetryAfterANotLandedAcquireKeepsItsLock(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	rdb, proxy := testenv.DelayedRedis(t, 100*time.Millisecond)
	rdb.AddHook(liftDelayAfterTimeout{proxy})
	c := lock.New(rdb, nil)
	defer c.Close()
	warm, err := c.Obtain(t.Context(), prefix+"{warm}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(t.Context())
	key := prefix + "{user:6}:lock"

	proxy.SetRequestDelay(500 * time.Millisecond)
	l, err := c.Obtain(t.Context(), key, time.Minute, &lock.ObtainOptions{Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("Obtain with Wait: %v", err)
	}
	defer l.Release(t.Context())
	// Let the first attempt land and the cleanup look a few times.
	time.Sleep(2 * time.Second)
	if got := direct.Get(t.Context(), key).Val(); got != l.Value() {
		t.Errorf("lock holds %q while the holder's lease runs (%v left); want the holder's value", got, l.Remaining())
	}
	if err := l.Context().Err(); err != nil {
		t.Errorf("lease ended: %v", context.Cause(l.Context()))
	}
}

// TestReleaseResentAfterItLandedIsReleased: the release lands but its reply
// is late; go-redis resends it on a new connection and the resend finds the
// key gone. Release must report success, not "expired".
func TestReleaseResentAfterItLandedIsReleased(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	opt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := toxic.New(opt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	opt.Addr = proxy.Addr()
	opt.ContextTimeoutEnabled = true
	opt.ReadTimeout = time.Second
	opt.MaxRetries = 2 // go-redis resends a command whose reply timed out
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	obs := &cleanups{}
	c := lock.New(rdb, &lock.Options{ReleaseTimeout: 20 * time.Second, Observer: obs})
	defer c.Close()
	// Load release.lua into the script cache: EVALSHA must run the first
	// time, not answer NOSCRIPT through the delay.
	warm, err := c.Obtain(t.Context(), prefix+"{warm}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	key := prefix + "{user:5}:lock"
	l, err := c.Obtain(t.Context(), key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}

	proxy.SetReplyDelay(time.Hour) // the release's reply is lost
	released := make(chan error, 1)
	go func() { released <- l.Release(context.Background()) }()
	testenv.WaitFor(t, 10*time.Second, "the release to land", func() bool {
		return direct.Exists(t.Context(), key).Val() == 0
	})
	proxy.SetReplyDelay(0) // the resend's reply gets through

	select {
	case err := <-released:
		if err != nil {
			t.Errorf("Release: %v, want nil: its first attempt deleted the lock", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Release did not return")
	}
	if got := obs.released(); !slices.Equal(got, []string{"released", "released"}) {
		t.Errorf("release results %v, want [released released]", got)
	}
}

// TestExtendDuringAutoRenewal: Extend from the holder while the renewal runs
// is safe (the race detector watches the TTL both use), and the renewal
// keeps the TTL the holder set. The race detector sees a race only where
// the renewal's read of the TTL is not ordered after the holder's write
// (a timer fired on the holder's thread carries its clock), so the holder
// extends every few milliseconds through six renewals.
func TestExtendDuringAutoRenewal(t *testing.T) {
	rdb := testenv.Redis(t)
	key := testenv.Prefix(t) + "{a}:lock"
	c := lock.New(rdb, nil)
	defer c.Close()
	// A second of lease: a loaded machine's stalls do not end it.
	l, err := c.Obtain(t.Context(), key, time.Second, &lock.ObtainOptions{AutoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
		if err := l.Extend(t.Context(), time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := l.Extend(t.Context(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // one renewal, at most 333 ms away
	if pttl := rdb.PTTL(t.Context(), key).Val(); pttl < 20*time.Second {
		t.Errorf("PTTL %v: the renewal went back to the first TTL after Extend set 30s", pttl)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// cleanups is an Observer that records cleanup and release results.
type cleanups struct {
	mu       sync.Mutex
	cleaned  []string
	releases []string
}

func (o *cleanups) Obtained(string, time.Duration) {}
func (o *cleanups) UnknownOutcome(string)          {}
func (o *cleanups) LeaseLost()                     {}
func (o *cleanups) Released(result string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.releases = append(o.releases, result)
}
func (o *cleanups) CleanedUp(result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cleaned = append(o.cleaned, result)
}
func (o *cleanups) results() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.cleaned)
}
func (o *cleanups) released() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.releases)
}
