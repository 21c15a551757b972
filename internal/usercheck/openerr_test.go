package usercheck_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// An open breaker tells how long it stays open, so the purchase's Retry-After
// is that time rather than a second the client would spend failing again.
func TestOpenBreakerTellsItsRemainingTime(t *testing.T) {
	const openTimeout = 5 * time.Second
	_, srv := newStub(t, usercheck.StubConfig{FailRate: 1})
	c := newClient(t, usercheck.Config{
		BaseURL: srv.URL,
		Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1, OpenTimeout: openTimeout},
	})
	err := c.Verify(t.Context(), 1, 1)
	if usercheck.RetryAfter(err) != 0 {
		t.Fatalf("RetryAfter of a failed call %v, want 0 (the breaker was closed)", usercheck.RetryAfter(err))
	}
	err = c.Verify(t.Context(), 1, 1)
	if !errors.Is(err, gobreaker.ErrOpenState) || !errors.Is(err, usercheck.ErrUnavailable) {
		t.Fatalf("Verify while open: %v, want ErrOpenState and ErrUnavailable", err)
	}
	// Bounds only: the machine may be slow between the two calls.
	if got := usercheck.RetryAfter(err); got <= 0 || got > openTimeout {
		t.Fatalf("RetryAfter %v, want in (0, %v]", got, openTimeout)
	}
	if got := usercheck.RetryAfter(err); got < openTimeout/2 {
		t.Logf("RetryAfter %v: the machine is slow", got)
	}
}
