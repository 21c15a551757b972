// Package usercheck asks the user-verification service whether a buyer may
// buy, and ships a stub of that service.
//
// The call is made while the purchase holds the activity's lock, which is why
// it exists as its own package: a user service answering in more than 10 s,
// called with a 30 s HTTP timeout under a 10 s lock, lets the lock expire
// under its holder. So every call here has a deadline (the
// smaller of the caller's and Config.Timeout), goes through a circuit breaker
// that stops calling a failing service at all, and fails closed: nothing but a
// 200 {"eligible": true} lets a purchase go on.
//
// A "not eligible" answer is a healthy service doing its job, so it counts as
// a success for the breaker; a caller that gives up (context.Canceled) counts
// as neither success nor failure.
package usercheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"

	"github.com/seckill-oss/seckill/internal/outbound"
)

var (
	// ErrRejected is wrapped by the error Verify returns when the service
	// answered that the user may not buy. The error is a *RejectedError.
	ErrRejected = errors.New("usercheck: user rejected")
	// ErrUnavailable is wrapped, together with its cause, by the error Verify
	// returns when no positive or negative answer was obtained: transport
	// error, non-200 status, bad body, missed deadline or open breaker.
	ErrUnavailable = errors.New("usercheck: unavailable")
)

// RejectedError is the service's "not eligible" answer. errors.Is(err,
// ErrRejected) holds for it.
type RejectedError struct {
	Reason string // as the service gave it; never empty
}

// Error implements error.
func (e *RejectedError) Error() string { return ErrRejected.Error() + ": " + e.Reason }

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// Verifier decides whether a user may buy in an activity. Verify returns nil
// (eligible), an error wrapping ErrRejected, or one wrapping ErrUnavailable.
type Verifier interface {
	Verify(ctx context.Context, userID, activityID int64) error
}

// ApproveAll is the built-in stand-in for the verification service, used when
// none is configured: it approves everyone. The service logs a warning when
// it runs with it.
type ApproveAll struct{}

// Verify returns nil.
func (ApproveAll) Verify(context.Context, int64, int64) error { return nil }

// Defaults of Config and BreakerConfig.
const (
	DefaultTimeout             = time.Second
	DefaultConsecutiveFailures = 5
	DefaultOpenTimeout         = 5 * time.Second
	DefaultHalfOpenRequests    = 1

	// maxBody bounds what is read of an answer: a real one is a few dozen bytes.
	maxBody = 4 << 10
)

// Config configures a Client. The zero value of each field means its default.
type Config struct {
	// BaseURL of the verification service, e.g. "http://users:8081". Invalid:
	// every Verify fails with ErrUnavailable.
	BaseURL string
	// Timeout bounds one call, on top of the caller's context deadline.
	// Default DefaultTimeout.
	Timeout time.Duration
	// HTTPClient; nil means a client of its own, with a transport tuned for
	// a flash sale (many idle connections to one host, short dial timeout).
	HTTPClient *http.Client
	Breaker    BreakerConfig
	// OnStateChange, if set, is told each breaker transition. It runs under
	// the breaker's lock: it must be quick and must not call the Client.
	OnStateChange func(from, to gobreaker.State)
	// Logger gets breaker transitions; nil: discarded.
	Logger *slog.Logger
	// Registry, if set, gets the client's metrics:
	// seckill_usercheck_requests_total{result} (eligible, rejected,
	// unavailable, open, canceled), seckill_usercheck_request_duration_seconds{result}
	// (calls that reached the network) and seckill_usercheck_breaker_state
	// (0 closed, 1 half-open, 2 open). One Client per registry.
	Registry prometheus.Registerer
}

// BreakerConfig tunes the circuit breaker.
type BreakerConfig struct {
	// ConsecutiveFailures that open the breaker. Default DefaultConsecutiveFailures.
	ConsecutiveFailures uint32
	// OpenTimeout is how long the breaker stays open, answering without a
	// call, before it lets trial requests through (half-open). Default
	// DefaultOpenTimeout.
	OpenTimeout time.Duration
	// HalfOpenRequests is how many trial requests run while half-open; that
	// many successes in a row close the breaker, one failure opens it again.
	// Default DefaultHalfOpenRequests.
	HalfOpenRequests uint32
	// Interval, if positive, clears the failure counts this often while the
	// breaker is closed. Zero never clears them (only a success does).
	Interval time.Duration
}

// Client calls the verification service through a circuit breaker. It is
// safe for concurrent use.
type Client struct {
	base    *url.URL
	baseErr error // set when BaseURL is unusable: every call fails closed
	timeout time.Duration
	http    *http.Client
	breaker *gobreaker.CircuitBreaker[verdict]
	opened  *openClock
	metrics *metrics
}

// verdict is a well-formed answer of the service. A rejection is a verdict,
// not an error, so the breaker counts it as a success.
type verdict struct {
	eligible bool
	reason   string
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{timeout: cfg.Timeout, http: cfg.HTTPClient}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.http == nil {
		c.http = outbound.Client(256) // a sale opens hundreds of calls to this one host at once
	}
	if c.base, c.baseErr = outbound.ParseBase(cfg.BaseURL); c.baseErr != nil {
		c.baseErr = fmt.Errorf("usercheck: %w", c.baseErr)
	}
	if c.baseErr != nil {
		logger.Error("usercheck: unusable base URL, every verification will fail", "err", c.baseErr)
	}

	c.breaker, c.opened = newBreaker(cfg, logger)
	c.metrics = newMetrics(cfg.Registry, c.State, logger)
	return c
}

// newBreaker returns the client's breaker of cfg.Breaker (defaults filled
// in) and the clock of its openings, which it tells of each transition, as
// it tells logger and cfg.OnStateChange.
func newBreaker(cfg Config, logger *slog.Logger) (*gobreaker.CircuitBreaker[verdict], *openClock) {
	b := cfg.Breaker
	if b.ConsecutiveFailures == 0 {
		b.ConsecutiveFailures = DefaultConsecutiveFailures
	}
	if b.OpenTimeout <= 0 {
		b.OpenTimeout = DefaultOpenTimeout
	}
	if b.HalfOpenRequests == 0 {
		b.HalfOpenRequests = DefaultHalfOpenRequests
	}
	opened := &openClock{timeout: b.OpenTimeout}
	return gobreaker.NewCircuitBreaker[verdict](gobreaker.Settings{
		Name:        "usercheck",
		MaxRequests: b.HalfOpenRequests,
		Interval:    b.Interval,
		Timeout:     b.OpenTimeout,
		ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= b.ConsecutiveFailures },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			opened.transition(to)
			level := slog.LevelInfo
			if to == gobreaker.StateOpen {
				level = slog.LevelWarn
			}
			logger.Log(context.Background(), level, "usercheck: breaker state changed", "from", from.String(), "to", to.String())
			if cfg.OnStateChange != nil {
				cfg.OnStateChange(from, to)
			}
		},
		// The caller giving up says nothing about the service's health.
		IsExcluded: func(err error) bool { return errors.Is(err, context.Canceled) },
	}), opened
}

// Verify asks whether userID may buy in activityID. It returns nil when the
// service answered eligible, a *RejectedError (wrapping ErrRejected) when it
// answered not eligible, and otherwise an error wrapping ErrUnavailable and
// the cause (context.DeadlineExceeded, gobreaker.ErrOpenState, ...). It
// returns by the earlier of ctx's deadline and Config.Timeout.
func (c *Client) Verify(ctx context.Context, userID, activityID int64) error {
	if c.baseErr != nil {
		c.metrics.count(resultUnavailable)
		return fmt.Errorf("%w: %w", ErrUnavailable, c.baseErr)
	}
	if err := ctx.Err(); err != nil {
		// Dead on arrival: no call is made, and it says nothing about the service.
		c.metrics.count(resultCanceled)
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	v, err := c.breaker.Execute(func() (verdict, error) {
		start := time.Now()
		v, err := c.call(ctx, userID, activityID)
		c.metrics.observe(resultOf(v, err), time.Since(start))
		return v, err
	})
	switch {
	case err != nil:
		c.metrics.count(resultOf(v, err))
		return fmt.Errorf("%w: %w", ErrUnavailable, c.opened.wrap(err))
	case !v.eligible:
		c.metrics.count(resultRejected)
		return &RejectedError{Reason: v.reason}
	default:
		c.metrics.count(resultEligible)
		return nil
	}
}

// call makes one request under its own deadline. Any error is a failure of
// the service, except context.Canceled, which is the caller's.
func (c *Client) call(ctx context.Context, userID, activityID int64) (verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	// Ids are formatted here, never taken as text, so nothing can be injected.
	u := *c.base
	u.Path += "/v1/users/" + strconv.FormatInt(userID, 10) + "/eligibility"
	u.RawPath = ""
	u.RawQuery = "activity_id=" + strconv.FormatInt(activityID, 10)
	status, body, err := outbound.Get(ctx, c.http, &u, nil, maxBody)
	if err != nil {
		return verdict{}, err
	}
	if status != http.StatusOK {
		return verdict{}, fmt.Errorf("answer status %d", status)
	}
	var answer struct {
		Eligible *bool  `json:"eligible"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return verdict{}, fmt.Errorf("decoding answer: %w", err)
	}
	if answer.Eligible == nil {
		return verdict{}, errors.New(`answer has no "eligible"`)
	}
	v := verdict{eligible: *answer.Eligible, reason: answer.Reason}
	if !v.eligible && v.reason == "" {
		v.reason = "not eligible"
	}
	return v, nil
}

// State reports the breaker's state.
func (c *Client) State() gobreaker.State { return c.breaker.State() }

// Close drops the client's idle connections, and with them the goroutines
// that serve them. The Client still works afterwards.
func (c *Client) Close() { c.http.CloseIdleConnections() }
