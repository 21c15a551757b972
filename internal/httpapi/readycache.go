package httpapi

import (
	"context"
	"sync"
	"time"
)

// ReadyCacheTTL is how long one readiness check's result answers /readyz
// (and the seckill_ready gauge): a probe storm, or many instances' probers,
// cost Redis and the database one ping each a second per instance, not one
// per probe.
const ReadyCacheTTL = time.Second

// readyCheck runs Service.Ready at most once per ReadyCacheTTL: callers
// within the TTL get the last result, and callers while a check runs wait
// for that check rather than starting their own.
type readyCheck struct {
	svc Service
	now func() time.Time

	mu      sync.Mutex
	at      time.Time     // when the last result was learned; zero: never
	err     error         // the last result
	running chan struct{} // closed when the check in flight ends; nil: none
}

func newReadyCheck(svc Service, now func() time.Time) *readyCheck {
	return &readyCheck{svc: svc, now: now}
}

// ready returns the result of a check no older than ReadyCacheTTL, or ctx's
// error when ctx ends while waiting for one.
func (r *readyCheck) ready(ctx context.Context) error {
	r.mu.Lock()
	if !r.at.IsZero() && r.now().Sub(r.at) < ReadyCacheTTL {
		err := r.err
		r.mu.Unlock()
		return err
	}
	wait := r.running
	if wait == nil {
		wait = make(chan struct{})
		r.running = wait
		// The check belongs to every caller waiting for it: one caller
		// going away does not cancel it, readyTimeout bounds it.
		go r.check(context.WithoutCancel(ctx), wait)
	}
	r.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *readyCheck) check(ctx context.Context, done chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := r.svc.Ready(ctx)
	r.mu.Lock()
	r.at, r.err, r.running = r.now(), err, nil
	r.mu.Unlock()
	close(done)
}
