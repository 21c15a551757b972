package httpapi

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ReadyCacheTTL is how long one readiness check's result answers /readyz
// (and the seckill_ready gauge): a probe storm, or many instances' probers,
// cost Redis and the database one ping each a second per instance, not one
// per probe.
const ReadyCacheTTL = time.Second

// readyCheck runs Service.Ready at most once per ReadyCacheTTL: callers
// within the TTL get the last result, and callers while a check runs share
// it (singleflight, as order.Orders.StatusCounts shares its count). Unlike
// that count, a failure is kept too: a probe must see it.
type readyCheck struct {
	svc    Service
	now    func() time.Time
	flight singleflight.Group

	mu  sync.Mutex
	at  time.Time // when the last result was learned; zero: never
	err error     // the last result
}

func newReadyCheck(svc Service, now func() time.Time) *readyCheck {
	return &readyCheck{svc: svc, now: now}
}

// last returns the last result when it is younger than ReadyCacheTTL.
func (r *readyCheck) last() (fresh bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.at.IsZero() && r.now().Sub(r.at) < ReadyCacheTTL, r.err
}

// ready returns the result of a check no older than ReadyCacheTTL, or ctx's
// error when ctx ends while waiting for one.
func (r *readyCheck) ready(ctx context.Context) error {
	if fresh, err := r.last(); fresh {
		return err
	}
	// The check belongs to every caller waiting for it: one caller going
	// away does not cancel it, readyTimeout bounds it.
	shared := context.WithoutCancel(ctx)
	ch := r.flight.DoChan("", func() (any, error) {
		if fresh, err := r.last(); fresh { // a check may have ended since
			return nil, err
		}
		ctx, cancel := context.WithTimeout(shared, readyTimeout)
		defer cancel()
		err := r.svc.Ready(ctx)
		r.mu.Lock()
		r.at, r.err = r.now(), err
		r.mu.Unlock()
		return nil, err
	})
	select {
	case res := <-ch:
		return res.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}
