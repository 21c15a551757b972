package payment

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
)

func newTestClient(t *testing.T, h http.HandlerFunc) (*Client, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	log := slog.New(slog.DiscardHandler)
	c := NewClient(srv.URL, 200*time.Millisecond, log, newMetrics(nil, log))
	t.Cleanup(c.Close)
	return c, &calls
}

// TestProviderAnswers: only a well-formed answer about this very order is a
// status; everything else is unknown, so nothing is expired or paid on it.
func TestProviderAnswers(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		delay  time.Duration
		want   string // "" for unknown
	}{
		{"paid", 200, `{"order_id":"o/1","status":"paid","paid_at":"2026-11-23T10:00:00.5Z"}`, 0, PaymentPaid},
		{"pending", 200, `{"order_id":"o/1","status":"pending"}`, 0, PaymentPending},
		{"failed", 200, `{"order_id":"o/1","status":"failed"}`, 0, PaymentFailed},
		{"no payment", 404, `{}`, 0, PaymentNone},
		{"server error", 500, `{"order_id":"o/1","status":"paid","paid_at":"2026-11-23T10:00:00Z"}`, 0, ""},
		{"another order's answer", 200, `{"order_id":"o/2","status":"paid","paid_at":"2026-11-23T10:00:00Z"}`, 0, ""},
		{"paid without paid_at", 200, `{"order_id":"o/1","status":"paid"}`, 0, ""},
		{"unknown status", 200, `{"order_id":"o/1","status":"refunded"}`, 0, ""},
		{"not JSON", 200, `paid`, 0, ""},
		{"oversized", 200, `{"order_id":"o/1","status":"pending","pad":"` + strings.Repeat("x", maxAnswer) + `"}`, 0, ""},
		{"past the deadline", 200, `{"order_id":"o/1","status":"pending"}`, time.Second, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.EscapedPath() != "/v1/payments/o%2F1" {
					t.Errorf("path %s, want the order id escaped", r.URL.EscapedPath())
				}
				select {
				case <-time.After(tt.delay):
				case <-r.Context().Done():
					return
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			p, err := c.Check(context.Background(), "o/1")
			switch {
			case tt.want == "" && !errors.Is(err, ErrUnknown):
				t.Errorf("Check = %+v, %v; want ErrUnknown", p, err)
			case tt.want != "" && (err != nil || p.Status != tt.want):
				t.Errorf("Check = %+v, %v; want %s", p, err, tt.want)
			case tt.want == PaymentPaid && !p.PaidAt.Equal(time.Date(2026, 11, 23, 10, 0, 0, 5e8, time.UTC)):
				t.Errorf("PaidAt = %v", p.PaidAt)
			}
		})
	}
}

// TestProviderBreakerOpens: a failing provider is not called at all once the
// breaker opens; its answers are unknown meanwhile.
func TestProviderBreakerOpens(t *testing.T) {
	c, calls := newTestClient(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	for range breakerFailures + 3 {
		if _, err := c.Check(context.Background(), "o1"); !errors.Is(err, ErrUnknown) {
			t.Fatalf("Check of a failing provider: %v, want ErrUnknown", err)
		}
	}
	if n := calls.Load(); n != breakerFailures {
		t.Errorf("provider called %d times, want %d: the breaker did not open", n, breakerFailures)
	}
	if _, err := c.Check(context.Background(), "o1"); !errors.Is(err, gobreaker.ErrOpenState) {
		t.Errorf("Check with the breaker open: %v, want ErrOpenState", err)
	}
}

// TestProviderErrorsNeverShowTheURLPassword: a password in
// SECKILL_PAYMENT_URL never reaches an error (and so a log line): not when
// the URL is unusable, not when it does not parse, not when the provider
// does not answer.
func TestProviderErrorsNeverShowTheURLPassword(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, raw := range []string{
		"ftp://user:s3cret@127.0.0.1:1",         // not http(s)
		"http://user:s3cret@127.0.0.1:1?x=1",    // a query
		"http://user:s3cret@127.0.0.1:notaport", // does not parse
		"http://user:s3cret@127.0.0.1:1",        // nobody answers
	} {
		c := NewClient(raw, 200*time.Millisecond, log, newMetrics(nil, log))
		_, err := c.Check(context.Background(), "o1")
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Check with %s: %v; want an error without the password", raw, err)
		}
		c.Close()
	}
}
