package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// A refenced lock is a new grant to the same holder: a greater fence than
// every grant before (its own and others'), a new value, the TTL set anew,
// and no way in for another owner; a lost lock is not refenced.
func TestRefence(t *testing.T) {
	rdb := testenv.Redis(t)
	prefix := testenv.Prefix(t)
	c := lock.New(rdb, nil)

	t.Run("a new fence under the same hold", func(t *testing.T) {
		key := prefix + "{a}:lock"
		l, err := c.Obtain(t.Context(), key, time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(t.Context())
		first, value := l.Fence(), l.Value()
		fence, err := l.Refence(t.Context(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if fence <= first || l.Fence() != fence {
			t.Fatalf("Refence gave %d (Fence %d) after %d, want a greater fence", fence, l.Fence(), first)
		}
		if l.Value() == value || rdb.Get(t.Context(), key).Val() != l.Value() {
			t.Errorf("the key holds %q, the lock's value is %q (was %q): want the new grant's", rdb.Get(t.Context(), key).Val(), l.Value(), value)
		}
		time.Sleep(1500 * time.Millisecond) // past the first TTL
		if err := l.Context().Err(); err != nil {
			t.Fatalf("lease ended at the first grant's TTL: %v", context.Cause(l.Context()))
		}
		if _, err := c.Obtain(t.Context(), key, time.Second, nil); !errors.Is(err, lock.ErrNotObtained) {
			t.Fatalf("another owner's Obtain: %v, want ErrNotObtained", err)
		}
	})
	t.Run("lost to another owner", func(t *testing.T) {
		key := prefix + "{b}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		rdb.Set(t.Context(), key, "someone else:99", time.Minute)
		if _, err := l.Refence(t.Context(), time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Refence: %v, want ErrNotHeld", err)
		}
		if l.Context().Err() == nil {
			t.Error("the lease runs on after the lock was found lost")
		}
		if v := rdb.Get(t.Context(), key).Val(); v != "someone else:99" {
			t.Errorf("the other owner's lock now holds %q", v)
		}
	})
	t.Run("released", func(t *testing.T) {
		key := prefix + "{c}:lock"
		l, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Refence(t.Context(), time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Refence after Release: %v, want ErrNotHeld", err)
		}
		if n := rdb.Exists(t.Context(), key).Val(); n != 0 {
			t.Error("Refence after Release brought the key back")
		}
	})
	t.Run("waited for", func(t *testing.T) {
		key := prefix + "{d}:lock"
		a, err := c.Obtain(t.Context(), key, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		var b *lock.Lock
		go func() {
			var err error
			b, err = c.Obtain(context.Background(), key, time.Minute, &lock.ObtainOptions{Wait: 5 * time.Second, MaxBackoff: 5 * time.Millisecond})
			got <- err
		}()
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := a.Refence(t.Context(), time.Minute)
			if errors.Is(err, lock.ErrWaitedFor) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("Refence while another owner waits: %v, want ErrWaitedFor", err)
			}
			time.Sleep(time.Millisecond)
		}
		if a.Context().Err() != nil || rdb.Get(t.Context(), key).Val() != a.Value() {
			t.Fatal("a refused Refence let the lock go")
		}
		if err := a.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("the waiter's Obtain: %v", err)
		}
		defer b.Release(t.Context())
		if _, err := b.Refence(t.Context(), time.Minute); err != nil {
			t.Errorf("the new holder's Refence, with nobody waiting but its own mark: %v", err)
		}
	})
}
