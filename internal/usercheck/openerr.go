package usercheck

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
)

// OpenError is wrapped by the error Verify returns while the breaker is open
// (it also wraps gobreaker.ErrOpenState): Remaining is how long the breaker
// stays open, so a client can be told when to come back instead of a fixed
// second it would spend failing again.
type OpenError struct {
	Remaining time.Duration
}

// Error implements error.
func (e *OpenError) Error() string {
	return "usercheck: breaker open for " + e.Remaining.Round(time.Millisecond).String() + " more: " + gobreaker.ErrOpenState.Error()
}

// Unwrap makes errors.Is(err, gobreaker.ErrOpenState) hold.
func (e *OpenError) Unwrap() error { return gobreaker.ErrOpenState }

// RetryAfter is how long the breaker behind err stays open, or 0 when err is
// not an open breaker's.
func RetryAfter(err error) time.Duration {
	var e *OpenError
	if errors.As(err, &e) {
		return e.Remaining
	}
	return 0
}

// openClock remembers when the breaker last opened; gobreaker does not say
// when its open state ends.
type openClock struct {
	timeout  time.Duration
	openedAt atomic.Int64 // unix nanoseconds; 0: not open
}

// transition records a state change (called from OnStateChange).
func (o *openClock) transition(to gobreaker.State) {
	if to == gobreaker.StateOpen {
		o.openedAt.Store(time.Now().UnixNano())
		return
	}
	o.openedAt.Store(0)
}

// wrap turns an open-state error into an *OpenError with the time left.
func (o *openClock) wrap(err error) error {
	if !errors.Is(err, gobreaker.ErrOpenState) {
		return err
	}
	at := o.openedAt.Load()
	if at == 0 {
		return err
	}
	left := o.timeout - time.Since(time.Unix(0, at))
	if left <= 0 {
		left = time.Millisecond
	}
	return &OpenError{Remaining: left}
}
