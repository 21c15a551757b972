package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sethvargo/go-retry"
)

// Lock is a held lock. Its methods are safe for concurrent use.
type Lock struct {
	client   *Client
	key      string
	fenceKey string
	owner    string // "<token>:"; never logged
	// fence is the grant's fence: set at the grant, raised by Refence.
	fence   atomic.Int64
	granted time.Time
	lease   *leaseContext

	extendMu sync.Mutex // Extends in order, so the last to succeed set the server's TTL
	ttl      time.Duration

	stopOnce    sync.Once
	stopRenewal chan struct{} // nil without AutoRenew
	renewalDone chan struct{}
}

// Value returns what the lock key holds while this grant has it,
// "<token>:<fence>", for scripts that must act only while the lock is still
// this grant's (stock.Store.LoadIfHeld). It proves ownership: never log it.
func (l *Lock) Value() string { return l.owner + strconv.FormatInt(l.fence.Load(), 10) }

// Fence returns the grant's fencing token: greater than every earlier grant's
// for the same key, as long as Redis keeps the counter (see the package doc).
func (l *Lock) Fence() int64 { return l.fence.Load() }

// Context returns the lease context. It derives from the context given to
// Obtain, and is done before the lease can expire in Redis (Err:
// context.DeadlineExceeded), when the lock is released, or when an Extend or
// renewal finds it lost (Err: context.Canceled); context.Cause tells which.
// A successful Extend moves its deadline.
func (l *Lock) Context() context.Context { return l.lease }

// Remaining returns the time left before the lease context's deadline, or 0
// once it is done.
func (l *Lock) Remaining() time.Duration { return l.lease.remaining() }

// Extend sets the lock's TTL to ttl if this owner still holds it, and moves
// the lease context's deadline to match. It returns an error wrapping
// ErrNotHeld, and ends the lease context, when the lock is lost; it returns
// ErrNotHeld too when the lease context has already ended, since that cannot
// be undone.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	l.extendMu.Lock()
	defer l.extendMu.Unlock()
	if l.lease.Err() != nil {
		return fmt.Errorf("%w: lease of %s already ended: %w", ErrNotHeld, l.key, context.Cause(l.lease))
	}
	if err := l.client.checkTTL(l.key, ttl); err != nil {
		return err
	}
	drift := l.client.drift(ttl)
	sent := time.Now()
	res, err := extendScript.Run(ctx, l.client.rdb, []string{l.key}, l.owner, ttl.Milliseconds()).Int64()
	if err != nil {
		// It may have landed with a shorter TTL than the current one.
		l.lease.shortenDeadline(sent.Add(ttl - drift))
		return fmt.Errorf("lock: extend %s: %w", l.key, err)
	}
	if res != 1 {
		lost := fmt.Errorf("%w: %s %s", ErrNotHeld, l.key, notHeldReason(res))
		l.lease.end(context.Canceled, lost)
		l.client.observer.LeaseLost()
		return lost
	}
	l.ttl = ttl
	if !l.lease.moveDeadline(sent.Add(ttl - drift)) {
		return fmt.Errorf("%w: lease of %s ended while extending: %w", ErrNotHeld, l.key, context.Cause(l.lease))
	}
	return nil
}

// Refence gives the held lock a new fence, greater than every earlier
// grant's of its counter and than the holder's own last fence, even when a
// Redis failover set the counter back (so the grant's value,
// "<token>:<fence>", is never one the holder already had), and sets its TTL
// to ttl: a new grant to the same holder, with no moment in which another
// owner could take the key. A holder whose work comes in steps, each
// written where the fence is checked, fences each step apart this way and
// keeps the key between them.
// The lease's deadline moves as by Extend. It returns the new fence, or an
// error wrapping ErrNotHeld, ending the lease, when the lock is lost. On any
// other error a new fence may have been issued or not: the lock keeps its
// fence (a fence skipped is harmless), and its lease may end sooner.
//
// While another owner waits to obtain the key (an Obtain with a Wait was
// refused in the last few of its backoff pauses), Refence changes nothing
// and returns ErrWaitedFor: the holder is still the holder, and should
// release the key once its step is done rather than keep it from the waiter.
func (l *Lock) Refence(ctx context.Context, ttl time.Duration) (int64, error) {
	l.extendMu.Lock()
	defer l.extendMu.Unlock()
	if l.lease.Err() != nil {
		return 0, fmt.Errorf("%w: lease of %s already ended: %w", ErrNotHeld, l.key, context.Cause(l.lease))
	}
	if err := l.client.checkTTL(l.key, ttl); err != nil {
		return 0, err
	}
	drift := l.client.drift(ttl)
	sent := time.Now()
	waitersKey, err := waitersKeyOf(l.key)
	if err != nil {
		return 0, err
	}
	fence, err := refenceScript.Run(ctx, l.client.rdb, []string{l.key, l.fenceKey, waitersKey}, l.owner, ttl.Milliseconds(), l.fence.Load()).Int64()
	switch {
	case err != nil:
		l.lease.shortenDeadline(sent.Add(ttl - drift))
		return 0, fmt.Errorf("lock: refence %s: %w", l.key, err)
	case fence == waitedFor:
		return 0, fmt.Errorf("%w: %s", ErrWaitedFor, l.key)
	case fence < 1:
		lost := fmt.Errorf("%w: %s %s", ErrNotHeld, l.key, notHeldReason(fence))
		l.lease.end(context.Canceled, lost)
		l.client.observer.LeaseLost()
		return 0, lost
	}
	l.ttl = ttl
	if !l.lease.moveDeadline(sent.Add(ttl - drift)) {
		return 0, fmt.Errorf("%w: lease of %s ended while refencing: %w", ErrNotHeld, l.key, context.Cause(l.lease))
	}
	l.fence.Store(fence)
	return fence, nil
}

// waitedFor is refence.lua's answer while another owner waits for the key.
const waitedFor = -2

// renew extends the lock every ttl/3 until Release or the lease ends. A
// failed renewal is retried at the next tick; the lease context keeps the
// holder safe meanwhile.
func (l *Lock) renew() {
	defer close(l.renewalDone)
	// The TTL is read under extendMu each time: a concurrent Extend may
	// change it, and the renewal follows.
	timer := time.NewTimer(l.renewalTTL() / 3)
	defer timer.Stop()
	for {
		select {
		case <-l.stopRenewal:
			return
		case <-l.lease.Done():
			return
		case <-timer.C:
		}
		ttl := l.renewalTTL()
		ctx, cancel := context.WithTimeout(context.Background(), l.client.releaseTimeout)
		err := l.Extend(ctx, ttl)
		cancel()
		timer.Reset(ttl / 3)
		if errors.Is(err, ErrNotHeld) {
			return
		}
		if err != nil {
			l.client.log.Warn("lock: renewal failed; retrying", "key", l.key, "err", err)
		}
	}
}

func (l *Lock) renewalTTL() time.Duration {
	l.extendMu.Lock()
	defer l.extendMu.Unlock()
	return l.ttl
}

// Release deletes the lock if this owner still holds it, and ends the lease
// context and any auto-renewal. It runs on a context detached from ctx's
// cancellation, with the Client's ReleaseTimeout. It returns nil (also when
// a resend of the release finds that its first attempt deleted the lock), an
// error wrapping ErrNotHeld saying whether the lock had expired or is held by
// another owner, or one wrapping ErrUnknownOutcome when Redis could not be
// reached (a background cleanup then keeps trying).
func (l *Lock) Release(ctx context.Context) error {
	l.stopOnce.Do(func() {
		if l.stopRenewal != nil {
			close(l.stopRenewal)
			<-l.renewalDone
		}
	})
	l.lease.end(context.Canceled, errReleased)
	res, err := l.client.release(ctx, l.key, l.owner)
	if err != nil {
		l.client.observer.Released("error", time.Since(l.granted))
		l.client.cleanUp(l.key, l.owner, time.Now().Add(l.renewalTTL()))
		return fmt.Errorf("%w: release of %s: %w", ErrUnknownOutcome, l.key, err)
	}
	l.client.observer.Released(releaseResult(res), time.Since(l.granted))
	if res != 1 && res != 2 {
		return fmt.Errorf("%w: %s %s", ErrNotHeld, l.key, notHeldReason(res))
	}
	return nil
}

func releaseResult(res int64) string {
	switch res {
	case 1, 2:
		return "released"
	case 0:
		return "expired"
	default:
		return "other_owner"
	}
}

func notHeldReason(res int64) string {
	if res == 0 {
		return "expired or was deleted"
	}
	return "is held by another owner"
}

// WriteReserve is the part of a lease of ttl kept back from a call to
// another service made under it (a user check, a payment provider query),
// for the writes that follow the call: a quarter of the TTL, at least
// 20 ms.
func WriteReserve(ttl time.Duration) time.Duration { return max(ttl/4, 20*time.Millisecond) }

// CallBudget is how long a call to another service may take under the
// lock: at most limit, and never into the lease's write reserve. It is not
// positive when the lease has too little left for any call.
func (l *Lock) CallBudget(limit time.Duration) time.Duration {
	return min(limit, l.Remaining()-WriteReserve(l.renewalTTL()))
}

// DetachedTimeout bounds work that must finish after a lease or its
// caller has gone: putting units back, learning whether a commit landed.
const DetachedTimeout = 2 * time.Second

// Detached keeps ctx's values but not its cancellation, with a deadline of
// DetachedTimeout: for the work after a lease.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), DetachedTimeout)
}

// RetryDetached runs f up to three times, 50 then 100 ms apart, each time
// with a fresh Detached context of ctx, until f returns nil or an error not
// marked retry.RetryableError; it returns f's last error. It is how work
// after a lease that is safe to repeat (a settle, a return with a receipt, a
// locking read) rides out a dependency's short failure.
func RetryDetached(ctx context.Context, f func(context.Context) error) error {
	backoff := retry.WithMaxRetries(2, retry.NewExponential(50*time.Millisecond))
	return retry.Do(context.WithoutCancel(ctx), backoff, func(context.Context) error {
		dctx, cancel := Detached(ctx)
		defer cancel()
		return f(dctx)
	})
}
