package lock

import (
	"context"
	"sync"
	"time"
)

// leaseContext is the context a Lock hands to its holder. Unlike a context
// from context.WithDeadline, its deadline moves: a successful Extend pushes it
// out, so the holder keeps one context for the whole time it holds the lock.
// It ends when its deadline passes (Err: context.DeadlineExceeded), when the
// lock is released or found lost (Err: context.Canceled), or when its parent
// ends; context.Cause says which.
type leaseContext struct {
	parent context.Context
	done   chan struct{}
	// causes is cancelled, with the cause, when the lease ends. Value exposes
	// it so context.Cause works on a leaseContext, and AfterFunc uses it so
	// that contexts derived from a lease need no goroutine of their own.
	causes   context.Context
	setCause context.CancelCauseFunc

	mu         sync.Mutex
	lease      time.Time // when the lease ends, unless extended
	timer      *time.Timer
	stopParent func() bool
	err        error
}

func newLeaseContext(parent context.Context, deadline time.Time) *leaseContext {
	c := &leaseContext{parent: parent, done: make(chan struct{}), lease: deadline}
	c.causes, c.setCause = context.WithCancelCause(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = time.AfterFunc(time.Until(deadline), c.expire)
	c.stopParent = context.AfterFunc(parent, func() { c.end(parent.Err(), context.Cause(parent)) })
	return c
}

// expire ends the lease when its timer fires, unless an Extend moved the
// deadline after the timer had already fired.
func (c *leaseContext) expire() {
	c.mu.Lock()
	early := time.Now().Before(c.lease)
	c.mu.Unlock()
	if !early {
		c.end(context.DeadlineExceeded, errLeaseRanOut)
	}
}

// end ends the lease once; later calls change nothing.
func (c *leaseContext) end(err, cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.setCause(cause) // before close(done): whoever sees Done closed finds the cause set
	close(c.done)
	c.timer.Stop()
	c.stopParent()
}

// moveDeadline sets the lease's end to d and reports whether the lease was
// still running.
func (c *leaseContext) moveDeadline(d time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.lease = d
	c.timer.Reset(time.Until(d))
	return true
}

// shortenDeadline moves the lease's end to d if d is earlier.
func (c *leaseContext) shortenDeadline(d time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && d.Before(c.lease) {
		c.lease = d
		c.timer.Reset(time.Until(d))
	}
}

// remaining returns the time left before the context ends by deadline, or 0
// when it has ended.
func (c *leaseContext) remaining() time.Duration {
	d, _ := c.Deadline()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0
	}
	return max(0, time.Until(d))
}

// Deadline returns the earlier of the lease's end and the parent's deadline.
func (c *leaseContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	d := c.lease
	c.mu.Unlock()
	if pd, ok := c.parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return d, true
}

func (c *leaseContext) Done() <-chan struct{} { return c.done }

func (c *leaseContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *leaseContext) Value(key any) any {
	// causes derives from Background, so it answers only the context
	// package's own key for context.Cause; everything else is the parent's.
	if v := c.causes.Value(key); v != nil {
		return v
	}
	return c.parent.Value(key)
}

// AfterFunc lets the context package register children of a lease without
// starting a goroutine per child.
func (c *leaseContext) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc(c.causes, f)
}

func (c *leaseContext) String() string { return "lock.leaseContext" }
