package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

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
