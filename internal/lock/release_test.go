package lock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

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
