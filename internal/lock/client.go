package lock

import (
	"context"
	"crypto/rand"
	"embed"
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

	"github.com/seckill-oss/seckill/internal/luascript"
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
	// ErrWaitedFor is Refence's refusal while another owner waits for the
	// lock: it is still held, with its fence, and should be released.
	ErrWaitedFor = errors.New("lock: another owner waits for it")
)

// luaFiles holds the package's scripts, one .lua file each.
//
//go:embed *.lua
var luaFiles embed.FS

var (
	// obtainScript grants the lock and issues its fence in one step.
	obtainScript = luascript.Load(luaFiles, "obtain.lua")
	// releaseScript deletes the lock only if this owner holds it (compare-and-delete), leaving a marker that it did.
	releaseScript = luascript.Load(luaFiles, "release.lua")
	// extendScript extends the lock only if this owner holds it.
	extendScript = luascript.Load(luaFiles, "extend.lua")
	// refenceScript gives a held lock a new fence, only if this owner holds it.
	refenceScript = luascript.Load(luaFiles, "refence.lua")
	// seedFenceScript raises a fence counter to a floor, never lowers it.
	seedFenceScript = luascript.Load(luaFiles, "seedfence.lua")
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
	// Logger gets what the Observer has no event for (a renewal that failed
	// and is retried); nil: discarded.
	Logger *slog.Logger
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
	log            *slog.Logger
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
	c := &Client{rdb: rdb, observer: noObserver{}, log: slog.New(slog.DiscardHandler), driftFactor: 0.01, releaseTimeout: time.Second, closing: make(chan struct{})}
	if opt != nil {
		if opt.Observer != nil {
			c.observer = opt.Observer
		}
		if opt.Logger != nil {
			c.log = opt.Logger
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
	// FenceOf, when set, is the lock key whose fence counter to draw from
	// instead of the key's own: many short-lived locks (one per order) can
	// share one counter, in the same Cluster hash slot as key, rather than
	// each leave a counter behind. SeedFence(FenceOf) seeds it. The counter's
	// key is the lock package's business (see "Keys and fences"). Fences stay
	// strictly increasing per key.
	FenceOf string
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
	fenceOf := key
	if opt.FenceOf != "" {
		fenceOf = opt.FenceOf
	}
	fenceKey, err := fenceKeyOf(fenceOf)
	if err != nil {
		return nil, err
	}
	waitersKey, err := waitersKeyOf(key)
	if err != nil {
		return nil, err
	}
	owner := newToken() + ":" // reused by the attempts after a refusal: a retry that finds it has succeeded
	waitUntil := time.Now().Add(opt.Wait)
	ttlMillis := ttl.Milliseconds()
	maxBackoff := maxWaitBackoff
	if opt.MaxBackoff > 0 {
		maxBackoff = opt.MaxBackoff
	}
	// A waiter marks the lock as waited for until a little past its next
	// attempt, so that a holder refencing it across steps lets it go.
	var marks int64
	if opt.Wait > 0 {
		marks = (4 * maxBackoff).Milliseconds()
	}
	for backoff := min(minBackoff, maxBackoff); ; backoff = min(2*backoff, maxBackoff) {
		sent := time.Now()
		fence, err := obtainScript.Run(ctx, c.rdb, []string{key, fenceKey, waitersKey}, owner, ttlMillis, marks).Int64()
		switch {
		case err == nil && fence > 0:
			return c.grant(ctx, key, fenceKey, owner, fence, sent, ttl, opt.AutoRenew), nil
		case err == nil:
			err = ErrNotObtained
		case isReply(err):
			return nil, fmt.Errorf("lock: obtain %s: %w", key, err)
		default:
			l, rerr := c.resolve(ctx, key, fenceKey, owner, sent, ttl, opt.AutoRenew, err)
			if !errors.Is(rerr, ErrNotObtained) {
				return l, rerr
			}
			err = rerr
			// A cleanup now deletes this owner's lock whenever it finds
			// it: the next attempts must be another owner, or the cleanup
			// would delete the lock they are granted.
			owner = newToken() + ":"
		}
		if err := pause(ctx, key, err, backoff, waitUntil); err != nil {
			return nil, err
		}
	}
}

// pause waits before the next attempt of an Obtain whose last attempt
// failed with err: about backoff, never past waitUntil. It returns the
// error to give up with when the wait is over or ctx has ended.
func pause(ctx context.Context, key string, err error, backoff time.Duration, waitUntil time.Time) error {
	if cerr := ctx.Err(); cerr != nil || !time.Now().Before(waitUntil) {
		if cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", err, cerr)
		}
		return err
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("%w: %s: %w", ErrNotObtained, key, ctx.Err())
	case <-time.After(min(jitter(backoff), time.Until(waitUntil))):
		return nil
	}
}

// resolve learns the outcome of an acquire attempt that failed with cause, a
// timeout or connection error. It returns the Lock if the attempt landed, an
// error wrapping ErrNotObtained if it did not, or one wrapping
// ErrUnknownOutcome, after starting a background cleanup, if it cannot tell.
func (c *Client) resolve(ctx context.Context, key, fenceKey, owner string, sent time.Time, ttl time.Duration, autoRenew bool, cause error) (*Lock, error) {
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
	return c.grant(ctx, key, fenceKey, owner, fence, sent, ttl, autoRenew), nil
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

func (c *Client) grant(ctx context.Context, key, fenceKey, owner string, fence int64, sent time.Time, ttl time.Duration, autoRenew bool) *Lock {
	l := &Lock{
		client:   c,
		key:      key,
		fenceKey: fenceKey,
		owner:    owner,
		granted:  time.Now(),
		ttl:      ttl,
		lease:    newLeaseContext(ctx, sent.Add(ttl-c.drift(ttl))),
	}
	l.fence.Store(fence)
	if autoRenew {
		l.stopRenewal = make(chan struct{})
		l.renewalDone = make(chan struct{})
		go l.renew()
	}
	return l
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
