package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/seckill-oss/seckill/internal/outbound"
)

// ErrUnknown is wrapped by every error Check returns: no answer that says
// anything about the payment was obtained (transport error, unexpected
// status or body, missed deadline, open breaker). It is never a status: the
// order stays as it is and is verified again later.
var ErrUnknown = errors.New("payment: provider answer unknown")

// What the provider says about an order's payment.
const (
	PaymentPaid    = "paid"
	PaymentPending = "pending"
	PaymentFailed  = "failed"
	PaymentNone    = "none" // 404: no payment was started
)

// Payment is the provider's answer for one order.
type Payment struct {
	Status string    // PaymentPaid, PaymentPending, PaymentFailed or PaymentNone
	PaidAt time.Time // with PaymentPaid
	// AmountMinor, Currency and MerchantID are what was paid, in what, to
	// whom, as the answer says (0 and "" when it leaves them out); a paid
	// answer must match the order with them (match.go).
	AmountMinor int64
	Currency    string
	MerchantID  string
}

// APIKeyHeader carries Config.APIKey to the provider.
const APIKeyHeader = "X-Api-Key" //nolint:gosec // G101: a header name, not a credential

// Provider answers what became of an order's payment.
type Provider interface {
	Check(ctx context.Context, orderID string) (Payment, error)
}

// maxAnswer bounds what is read of an answer: a real one is ~100 bytes.
const maxAnswer = 4 << 10

// Breaker settings, as the user check's: five failures in a row open it for
// five seconds, then one trial call.
const (
	breakerFailures    = 5
	breakerOpenTimeout = 5 * time.Second
)

// Client queries the payment provider, GET {base}/v1/payments/{order_id},
// through a circuit breaker. Every call is bounded by the caller's context
// (the verification derives it from the per-order lease) and by the
// Client's timeout. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	baseErr error
	apiKey  string // never logged
	timeout time.Duration
	http    *http.Client
	breaker *gobreaker.CircuitBreaker[Payment]
	m       *metrics
}

// NewClient returns a Client of the provider at baseURL, each call bounded
// by timeout. An unusable baseURL makes every Check fail with ErrUnknown.
func NewClient(baseURL string, timeout time.Duration, log *slog.Logger, m *metrics) *Client {
	c := &Client{timeout: timeout, m: m, http: outbound.Client(64)}
	if c.base, c.baseErr = outbound.ParseBase(baseURL); c.baseErr != nil {
		c.baseErr = fmt.Errorf("payment: provider %w", c.baseErr)
	}
	c.breaker = gobreaker.NewCircuitBreaker[Payment](gobreaker.Settings{
		Name:        "payment",
		MaxRequests: 1,
		Timeout:     breakerOpenTimeout,
		ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= breakerFailures },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			log.Warn("payment: provider breaker state changed", "from", from.String(), "to", to.String())
		},
		// The caller giving up says nothing about the provider's health.
		IsExcluded: func(err error) bool { return errors.Is(err, context.Canceled) },
	})
	m.breakerState(func() float64 { return float64(c.breaker.State()) })
	return c
}

// Check asks the provider about the order's payment. Any error wraps
// ErrUnknown.
func (c *Client) Check(ctx context.Context, orderID string) (Payment, error) {
	if c.baseErr != nil {
		c.m.providerCall("unknown")
		return Payment{}, fmt.Errorf("%w: %w", ErrUnknown, c.baseErr)
	}
	p, err := c.breaker.Execute(func() (Payment, error) { return c.call(ctx, orderID) })
	switch {
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		c.m.providerCall("open")
	case err != nil:
		c.m.providerCall("unknown")
	default:
		c.m.providerCall(p.Status)
	}
	if err != nil {
		return Payment{}, fmt.Errorf("%w: order %s: %w", ErrUnknown, orderID, err)
	}
	return p, nil
}

func (c *Client) call(ctx context.Context, orderID string) (Payment, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	u.Path += "/v1/payments/" + orderID
	u.RawPath = c.base.EscapedPath() + "/v1/payments/" + url.PathEscape(orderID)
	var header http.Header
	if c.apiKey != "" {
		header = http.Header{APIKeyHeader: {c.apiKey}}
	}
	status, body, err := outbound.Get(ctx, c.http, &u, header, maxAnswer)
	switch {
	case err != nil:
		return Payment{}, err
	case status == http.StatusNotFound:
		return Payment{Status: PaymentNone}, nil
	case status != http.StatusOK:
		return Payment{}, fmt.Errorf("answer status %d", status)
	}
	return parseAnswer(body, orderID)
}

// parseAnswer reads a 200 answer; anything but a well-formed answer about
// this order is an error, never a status.
func parseAnswer(body []byte, orderID string) (Payment, error) {
	var a struct {
		OrderID     string `json:"order_id"`
		Status      string `json:"status"`
		PaidAt      string `json:"paid_at"`
		AmountMinor int64  `json:"amount_minor"`
		Currency    string `json:"currency"`
		MerchantID  string `json:"merchant_id"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return Payment{}, fmt.Errorf("decoding answer: %w", err)
	}
	if a.OrderID != orderID {
		return Payment{}, fmt.Errorf("answer is about order %q", a.OrderID)
	}
	switch a.Status {
	case PaymentPending, PaymentFailed:
		return Payment{Status: a.Status}, nil
	case PaymentPaid:
		at, err := time.Parse(time.RFC3339Nano, a.PaidAt)
		if err != nil {
			return Payment{}, fmt.Errorf("paid answer without a valid paid_at: %w", err)
		}
		return Payment{Status: PaymentPaid, PaidAt: at.UTC(), AmountMinor: a.AmountMinor, Currency: a.Currency, MerchantID: a.MerchantID}, nil
	}
	return Payment{}, fmt.Errorf("answer has status %q", a.Status)
}

// Close drops idle connections to the provider.
func (c *Client) Close() { c.http.CloseIdleConnections() }
