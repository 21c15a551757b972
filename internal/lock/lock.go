// Package lock is a Redis lease lock that stays safe when the network and the
// clock misbehave.
//
// It exists because of two production incidents (docs/SEEDS.md): a release
// that deleted another holder's lock, and an acquire that timed out on the
// client but had succeeded in Redis, locking a user out for the whole TTL.
// The common libraries each leave one of these holes open; this package
// closes them:
//
//   - Obtain is one round trip: a Lua script sets the lock, with a random
//     owner token and a TTL, and issues a fencing token in the same step.
//   - Release and Extend are compare-and-delete and compare-and-PEXPIRE
//     scripts: only the owner can remove or extend its lock. Release runs on
//     a context detached from the caller's cancellation, with its own
//     timeout, so a cancelled request still releases. A release leaves a
//     marker for ReleaseTimeout, so that a resend of a release that landed
//     (go-redis retries a command whose reply timed out) reports "released",
//     not "expired".
//   - When an acquire fails with a timeout or a connection error, Obtain reads
//     the key back (GET and compare, retried) to learn whether it landed. If
//     it landed, Obtain returns the lock. Otherwise (it cannot tell, or the
//     key is not ours yet) a background compare-and-delete, owned by the
//     Client, watches the key for a TTL and removes it should it become ours:
//     an acquire that timed out on the client can still land later (a TCP
//     retransmit, a resend). No lock is left stranded for its TTL by a
//     client-side timeout.
//   - Lock.Context is a lease context: it is done before the lease can expire
//     in Redis (measured from before the acquire was sent, on the monotonic
//     clock, minus a drift margin), or as soon as the lock is found lost.
//     Derive every deadline taken under the lock from it.
//
// # Keys and fences
//
// Every grant carries a fence that strictly increases per key. The counter
// lives in its own key in the lock's Cluster hash slot: key+":fence" when the
// key has a {hash tag}, such as "seckill:{act:7}:lock"; otherwise
// "{"+key+"}:fence", whose tag is the whole lock key and so hashes to the
// lock's slot. (A key without a hash tag must then not contain '}'.) The lock
// itself holds "<token>:<fence>", which lets a retried acquire find its own
// grant and the same fence.
//
// The counter is never expired. If Redis loses it (a failover before
// replication, a restart without persistence), it starts again from 1, and
// fences would go backwards. Fences are meant to be checked where the
// protected data lives (the order service writes only if fence > the highest
// fence stored), so a lost counter makes writes fail rather than succeed
// twice; to restore progress, seed the counter from the highest fence the
// database has seen with SeedFence, at start-up and whenever a write is
// refused as stale.
//
// Redis replication is asynchronous: a failover can lose a lock as well as
// its fence. The fence check is what keeps data correct across that.
package lock

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	// ErrNotObtained means the lock is held by another owner (or, after a
	// failed acquire, that the acquire had not landed when looked up; a
	// background cleanup then removes it should it land later).
	ErrNotObtained = errors.New("lock: not obtained")
	// ErrNotHeld means the lock is no longer this owner's: it expired, was
	// deleted, or is held by another owner. The wrapping error says which.
	ErrNotHeld = errors.New("lock: not held")
	// ErrUnknownOutcome means a command failed with a timeout or connection
	// error and whether it took effect could not be learned. After an
	// acquire, a background cleanup removes the lock should it be ours.
	ErrUnknownOutcome = errors.New("lock: outcome unknown")
	// ErrAcquireFailed comes with ErrNotObtained when the acquire command
	// itself failed (a timeout or connection error) and had not landed when
	// looked up: Redis, not another holder, kept the lock from the caller.
	ErrAcquireFailed = errors.New("lock: acquire failed")
)

var (
	//go:embed obtain.lua
	obtainLua    string
	obtainScript = redis.NewScript(obtainLua)
	//go:embed release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)
	//go:embed extend.lua
	extendLua    string
	extendScript = redis.NewScript(extendLua)
	//go:embed seedfence.lua
	seedFenceLua    string
	seedFenceScript = redis.NewScript(seedFenceLua)
)

var (
	errLeaseRanOut = fmt.Errorf("lock: lease ran out: %w", context.DeadlineExceeded)
	errReleased    = fmt.Errorf("lock: released: %w", context.Canceled)
)

const (
	lookupAttempts = 3 // GETs after an acquire of unknown outcome
	minBackoff     = 10 * time.Millisecond
	maxWaitBackoff = 200 * time.Millisecond // default cap between acquire attempts when waiting
	maxCleanupWait = time.Second            // between background cleanup attempts
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// Observer receives events for metrics; nil: none.
	Observer Observer
	// DriftFactor sizes the margin by which a lease context ends before the
	// lease can expire in Redis: drift = ttl*DriftFactor + 2ms. It covers
	// clock rate differences between client and server. Default 0.01.
	DriftFactor float64
	// ReleaseTimeout bounds each release, lookup and cleanup command, which
	// run detached from the caller's cancellation. Default 1s.
	ReleaseTimeout time.Duration
}

// Client obtains locks. It owns the background cleanups of acquires whose
// outcome was unknown; Close waits for them.
type Client struct {
	rdb            redis.UniversalClient
	observer       Observer
	driftFactor    float64
	releaseTimeout time.Duration

	mu       sync.Mutex
	closed   bool
	closing  chan struct{}
	cleanups sync.WaitGroup
}

// New returns a Client using rdb, which works as a single node, Sentinel or
// Cluster client. The client should have ContextTimeoutEnabled set, so that
// context deadlines interrupt commands in flight. opt may be nil.
func New(rdb redis.UniversalClient, opt *Options) *Client {
	c := &Client{rdb: rdb, observer: noObserver{}, driftFactor: 0.01, releaseTimeout: time.Second, closing: make(chan struct{})}
	if opt != nil {
		if opt.Observer != nil {
			c.observer = opt.Observer
		}
		if opt.DriftFactor > 0 {
			c.driftFactor = opt.DriftFactor
		}
		if opt.ReleaseTimeout > 0 {
			c.releaseTimeout = opt.ReleaseTimeout
		}
	}
	return c
}

// ObtainOptions configure one Obtain call. nil means try once.
type ObtainOptions struct {
	// Wait is how long to keep retrying, with jittered exponential backoff,
	// while the lock is held by someone else. 0: try once.
	Wait time.Duration
	// AutoRenew extends the lock every ttl/3 until Release. A renewal that
	// finds the lock lost ends the lease context.
	AutoRenew bool
	// MaxBackoff caps the pause between attempts while waiting; 0 means
	// 200ms. Holders that keep the lock for milliseconds want a few.
	MaxBackoff time.Duration
	// FenceKey, when set, is the fence counter to draw from instead of the
	// key's own: many short-lived locks (one per order) can share one
	// counter, in the same Cluster hash slot as key, rather than each leave a
	// counter behind. SeedFence seeds it through any lock key whose own
	// counter it is. Fences stay strictly increasing per key.
	FenceKey string
}

// Obtain acquires the lock at key for ttl. It returns ErrNotObtained when
// another owner holds it (after waiting up to opt.Wait), an error wrapping
// ErrUnknownOutcome when the acquire failed in a way that leaves its outcome
// unknown (a background cleanup then removes the key should it be ours), or
// another error. Errors of ctx stay visible through errors.Is.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opt *ObtainOptions) (*Lock, error) {
	began := time.Now()
	l, err := c.obtain(ctx, key, ttl, opt)
	result := "obtained"
	switch {
	case errors.Is(err, ErrNotObtained):
		result = "not_obtained"
	case errors.Is(err, ErrUnknownOutcome):
		result = "unknown"
	case err != nil:
		result = "error"
	}
	c.observer.Obtained(result, time.Since(began))
	return l, err
}

func (c *Client) obtain(ctx context.Context, key string, ttl time.Duration, opt *ObtainOptions) (*Lock, error) {
	if opt == nil {
		opt = &ObtainOptions{}
	}
	if err := c.checkTTL(key, ttl); err != nil {
		return nil, err
	}
	fenceKey, err := fenceKeyOf(key)
	if err != nil {
		return nil, err
	}
	if opt.FenceKey != "" {
		fenceKey = opt.FenceKey
	}
	owner := newToken() + ":" // reused by the attempts after a refusal: a retry that finds it has succeeded
	waitUntil := time.Now().Add(opt.Wait)
	ttlMillis := ttl.Milliseconds()
	maxBackoff := maxWaitBackoff
	if opt.MaxBackoff > 0 {
		maxBackoff = opt.MaxBackoff
	}
	for backoff := min(minBackoff, maxBackoff); ; backoff = min(2*backoff, maxBackoff) {
		sent := time.Now()
		fence, err := obtainScript.Run(ctx, c.rdb, []string{key, fenceKey}, owner, ttlMillis).Int64()
		switch {
		case err == nil && fence > 0:
			return c.grant(ctx, key, owner, fence, sent, ttl, opt.AutoRenew), nil
		case err == nil:
			err = ErrNotObtained
		case isReply(err):
			return nil, fmt.Errorf("lock: obtain %s: %w", key, err)
		default:
			l, rerr := c.resolve(ctx, key, owner, sent, ttl, opt.AutoRenew, err)
			if !errors.Is(rerr, ErrNotObtained) {
				return l, rerr
			}
			err = rerr
			// A cleanup now deletes this owner's lock whenever it finds
			// it: the next attempts must be another owner, or the cleanup
			// would delete the lock they are granted.
			owner = newToken() + ":"
		}
		if cerr := ctx.Err(); cerr != nil || !time.Now().Before(waitUntil) {
			if cerr != nil && !errors.Is(err, cerr) {
				err = fmt.Errorf("%w: %w", err, cerr)
			}
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s: %w", ErrNotObtained, key, ctx.Err())
		case <-time.After(min(jitter(backoff), time.Until(waitUntil))):
		}
	}
}

// resolve learns the outcome of an acquire attempt that failed with cause, a
// timeout or connection error. It returns the Lock if the attempt landed, an
// error wrapping ErrNotObtained if it did not, or one wrapping
// ErrUnknownOutcome, after starting a background cleanup, if it cannot tell.
func (c *Client) resolve(ctx context.Context, key, owner string, sent time.Time, ttl time.Duration, autoRenew bool, cause error) (*Lock, error) {
	fence, err := c.lookup(ctx, key, owner)
	switch {
	case err != nil:
		c.observer.UnknownOutcome("unknown")
		c.cleanUpLateAcquire(key, owner, ttl)
		return nil, fmt.Errorf("%w: acquire of %s failed with %w; lookup: %w", ErrUnknownOutcome, key, cause, err)
	case fence == 0:
		// Not landed yet is not never: the command may still be on its way
		// (a TCP retransmit, a resend on another connection) and would then
		// hold the key for a whole TTL with nobody to release it.
		c.observer.UnknownOutcome("not_held")
		c.cleanUpLateAcquire(key, owner, ttl)
		return nil, fmt.Errorf("%w: %w: %s had not landed: %w", ErrNotObtained, ErrAcquireFailed, key, cause)
	}
	c.observer.UnknownOutcome("held")
	if ctx.Err() != nil {
		// The acquire landed but the caller has given up: free the lock now
		// rather than hand out a lease that is already over.
		c.cleanUpLateAcquire(key, owner, ttl)
		return nil, fmt.Errorf("%w: %s: %w", ErrNotObtained, key, ctx.Err())
	}
	return c.grant(ctx, key, owner, fence, sent, ttl, autoRenew), nil
}

// lookup reads the lock back to learn whether owner holds it, retrying a few
// times on a context detached from the caller's cancellation. It returns the
// owner's fence, 0 when the key is absent or someone else's, or the last
// error when every attempt failed.
func (c *Client) lookup(ctx context.Context, key, owner string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.releaseTimeout)
	defer cancel()
	var err error
	for backoff := minBackoff; ; backoff *= 2 {
		var v string
		attempt, cancelAttempt := context.WithTimeout(ctx, c.releaseTimeout/lookupAttempts)
		v, err = c.rdb.Get(attempt, key).Result()
		cancelAttempt()
		switch {
		case errors.Is(err, redis.Nil):
			return 0, nil
		case err == nil && !strings.HasPrefix(v, owner):
			return 0, nil
		case err == nil:
			fence, perr := strconv.ParseInt(v[len(owner):], 10, 64)
			if perr != nil {
				return 0, fmt.Errorf("lock: %s holds a malformed value: %w", key, perr)
			}
			return fence, nil
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(jitter(backoff)):
		}
	}
}

func (c *Client) grant(ctx context.Context, key, owner string, fence int64, sent time.Time, ttl time.Duration, autoRenew bool) *Lock {
	l := &Lock{
		client:  c,
		key:     key,
		owner:   owner,
		fence:   fence,
		granted: time.Now(),
		ttl:     ttl,
		lease:   newLeaseContext(ctx, sent.Add(ttl-c.drift(ttl))),
	}
	if autoRenew {
		l.stopRenewal = make(chan struct{})
		l.renewalDone = make(chan struct{})
		go l.renew()
	}
	return l
}

// cleanUp deletes owner's lock at key in the background, retrying until an
// attempt gets an answer, until the lock has expired anyway (at until), or
// until Close.
func (c *Client) cleanUp(key, owner string, until time.Time) {
	c.startCleanUp(key, owner, until, false)
}

// cleanUpLateAcquire deletes owner's lock at key in the background whenever
// it finds it during the next ttl: an acquire that failed on the client can
// land at any moment after, and holds the key for ttl from then. Later
// landings are not covered; go-redis resends and TCP retransmits come within
// a TTL.
func (c *Client) cleanUpLateAcquire(key, owner string, ttl time.Duration) {
	c.startCleanUp(key, owner, time.Now().Add(ttl), true)
}

func (c *Client) startCleanUp(key, owner string, until time.Time, watch bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.observer.CleanedUp(c.cleanUpUntil(key, owner, time.Time{}, watch))
		return
	}
	c.cleanups.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.cleanups.Done()
		c.observer.CleanedUp(c.cleanUpUntil(key, owner, until, watch))
	}()
}

// cleanUpUntil runs compare-and-delete for owner's lock at key until an
// attempt gets an answer or until passes. With watch, it goes on until
// until whatever the answers, as the lock may appear later; its result is
// then "released" if any attempt deleted the lock.
func (c *Client) cleanUpUntil(key, owner string, until time.Time, watch bool) string {
	result := ""
	for backoff := minBackoff; ; backoff = min(2*backoff, maxCleanupWait) {
		res, err := c.release(context.Background(), key, owner)
		if err == nil && result != "released" {
			result = releaseResult(res)
		}
		if err == nil && !watch {
			return result
		}
		if !time.Now().Before(until) {
			if result == "" {
				return "expired"
			}
			return result
		}
		select {
		case <-c.closing:
			if result == "" {
				slog.Warn("lock: cleanup abandoned at Close; the key expires by its TTL", "key", key, "err", err)
				return "abandoned"
			}
			return result
		default:
		}
		select {
		case <-c.closing: // one last attempt
		case <-time.After(jitter(backoff)):
		}
	}
}

// release runs the compare-and-delete script on a context detached from
// ctx's cancellation, with the Client's own timeout. Its marker lives as
// long as the timeout: every resend go-redis makes of this command comes
// within it.
func (c *Client) release(ctx context.Context, key, owner string) (int64, error) {
	marker, err := releasedKeyOf(key, owner)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.releaseTimeout)
	defer cancel()
	return releaseScript.Run(ctx, c.rdb, []string{key, marker}, owner, c.releaseTimeout.Milliseconds()).Int64()
}

// SeedFence raises the fence counter of key so that every later grant's fence
// is greater than atLeast. It never lowers the counter. Use it with the
// highest fence the protected data has seen after Redis may have lost the
// counter.
func (c *Client) SeedFence(ctx context.Context, key string, atLeast int64) error {
	fenceKey, err := fenceKeyOf(key)
	if err != nil {
		return err
	}
	if err := seedFenceScript.Run(ctx, c.rdb, []string{fenceKey}, atLeast).Err(); err != nil {
		return fmt.Errorf("lock: seed fence of %s: %w", key, err)
	}
	return nil
}

// Close lets pending background cleanups make one last attempt, waits for
// them, and makes later cleanups run synchronously. It does not close the
// Redis client. It always returns nil.
func (c *Client) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.closing)
	}
	c.mu.Unlock()
	c.cleanups.Wait()
	return nil
}

func (c *Client) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*c.driftFactor) + 2*time.Millisecond
}

// checkTTL refuses a TTL the drift margin would swallow whole: its lease
// would end before it began.
func (c *Client) checkTTL(key string, ttl time.Duration) error {
	if drift := c.drift(ttl); ttl <= drift {
		return fmt.Errorf("lock: ttl %v of %s does not exceed the drift margin %v", ttl, key, drift)
	}
	return nil
}

// Lock is a held lock. Its methods are safe for concurrent use.
type Lock struct {
	client  *Client
	key     string
	owner   string // "<token>:"; never logged
	fence   int64
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
func (l *Lock) Value() string { return l.owner + strconv.FormatInt(l.fence, 10) }

// Fence returns the grant's fencing token: greater than every earlier grant's
// for the same key, as long as Redis keeps the counter (see the package doc).
func (l *Lock) Fence() int64 { return l.fence }

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
		slog.Warn("lock: lease lost", "key", l.key, "fence", l.fence)
		return lost
	}
	l.ttl = ttl
	if !l.lease.moveDeadline(sent.Add(ttl - drift)) {
		return fmt.Errorf("%w: lease of %s ended while extending: %w", ErrNotHeld, l.key, context.Cause(l.lease))
	}
	return nil
}

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
			slog.Warn("lock: renewal failed; retrying", "key", l.key, "err", err)
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

// fenceKeyOf returns the key of the fence counter of key, in key's hash slot.
func fenceKeyOf(key string) (string, error) { return siblingKeyOf(key, "fence") }

// releasedKeyOf returns the key of owner's release marker of key, in key's
// hash slot: key+":released:<token>".
func releasedKeyOf(key, owner string) (string, error) {
	return siblingKeyOf(key, "released:"+strings.TrimSuffix(owner, ":"))
}

// siblingKeyOf returns key+":"+name if key has a hash tag, otherwise
// "{"+key+"}:"+name, whose tag is the whole key: either way, key's slot.
func siblingKeyOf(key, name string) (string, error) {
	if open := strings.IndexByte(key, '{'); open >= 0 && strings.IndexByte(key[open+1:], '}') > 0 {
		return key + ":" + name, nil
	}
	if strings.IndexByte(key, '}') >= 0 {
		return "", fmt.Errorf("lock: key %q has no {hash tag} but contains '}': give it a hash tag", key)
	}
	return "{" + key + "}:" + name, nil
}

// isReply reports whether err is an error reply from Redis, which means the
// command was refused and did not take effect, unlike a timeout or a broken
// connection.
func isReply(err error) bool {
	_, ok := errors.AsType[redis.Error](err)
	return ok
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return base64.RawURLEncoding.EncodeToString(b)
}

// jitter returns a duration in [d/2, d), so that waiting clients spread out.
func jitter(d time.Duration) time.Duration {
	return d/2 + mathrand.N(d/2+1)
}
