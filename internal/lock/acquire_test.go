package lock_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestTimedOutButSucceededIsRecognised: the reply of the acquire is late but
// the follow-up lookup gets through; Obtain returns the lock with its fence.
func TestTimedOutButSucceededIsRecognised(t *testing.T) {
	direct := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	rdb, proxy := testenv.ProxiedRedis(t, 100*time.Millisecond)
	c := lockClientThrough(t, rdb, proxy, nil)
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

// lockClientThrough is a lock client on rdb, which reaches the test's Redis
// through proxy, closed when the test ends. The proxy's delays lift once a
// command fails (liftDelayAfterTimeout).
func lockClientThrough(t *testing.T, rdb *redis.Client, proxy delays, opt *lock.Options) *lock.Client {
	t.Helper()
	rdb.AddHook(liftDelayAfterTimeout{proxy})
	c := lock.New(rdb, opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// warmScripts obtains and releases a lock of its own, so obtain.lua is in
// the script cache: a late EVALSHA then runs rather than failing with
// NOSCRIPT.
func warmScripts(t *testing.T, c *lock.Client, prefix string) {
	t.Helper()
	warm, err := c.Obtain(t.Context(), prefix+"{warm}:lock", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(t.Context())
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
	c := lockClientThrough(t, rdb, proxy, nil)
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
	obs := &cleanups{}
	c := lockClientThrough(t, rdb, proxy, &lock.Options{Observer: obs})
	warmScripts(t, c, prefix)
	key := prefix + "{user:4}:lock"

	proxy.SetRequestDelay(500 * time.Millisecond)
	_, err := c.Obtain(t.Context(), key, ttl, nil)
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
	c := lockClientThrough(t, rdb, proxy, nil)
	warmScripts(t, c, prefix)
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
