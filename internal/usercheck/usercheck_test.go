package usercheck_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts h on a test server closed at the end of the test.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newStub starts a Stub behaving as cfg.
func newStub(t *testing.T, cfg usercheck.StubConfig) (*usercheck.Stub, *httptest.Server) {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	stub, err := usercheck.NewStub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return stub, serve(t, stub)
}

// newClient returns a Client of baseURL whose idle connections close with the test.
func newClient(t *testing.T, cfg usercheck.Config) *usercheck.Client {
	t.Helper()
	c := usercheck.New(cfg)
	t.Cleanup(c.Close)
	return c
}

func TestVerifyEligible(t *testing.T) {
	var gotPath, gotQuery string
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.EscapedPath(), r.URL.RawQuery
		w.Write([]byte(`{"eligible": true}`))
	}))
	// A base URL with a path and a trailing slash keeps its path.
	c := newClient(t, usercheck.Config{BaseURL: srv.URL + "/users-api/"})
	if err := c.Verify(t.Context(), 42, 7); err != nil {
		t.Fatalf("Verify: %v, want nil", err)
	}
	if gotPath != "/users-api/v1/users/42/eligibility" || gotQuery != "activity_id=7" {
		t.Errorf("server saw path %q query %q", gotPath, gotQuery)
	}
}

func TestVerifyRejectedIsASuccessForTheBreaker(t *testing.T) {
	_, srv := newStub(t, usercheck.StubConfig{RejectRate: 1})
	c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1}})
	for range 5 {
		err := c.Verify(t.Context(), 42, 7)
		var rej *usercheck.RejectedError
		if !errors.Is(err, usercheck.ErrRejected) || !errors.As(err, &rej) || errors.Is(err, usercheck.ErrUnavailable) {
			t.Fatalf("Verify: %v, want a *RejectedError only", err)
		}
		if rej.Reason != "stub: configured rejection" {
			t.Errorf("reason %q", rej.Reason)
		}
	}
	if s := c.State(); s != gobreaker.StateClosed {
		t.Errorf("breaker %v after rejections, want closed", s)
	}
}

func TestVerifyRejectedWithoutReason(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"eligible": false}`))
	}))
	err := newClient(t, usercheck.Config{BaseURL: srv.URL}).Verify(t.Context(), 1, 1)
	var rej *usercheck.RejectedError
	if !errors.As(err, &rej) || rej.Reason == "" {
		t.Fatalf("Verify: %v, want a *RejectedError with a reason", err)
	}
}

// Every answer but a well-formed 200 is a failure: nothing is sold on it.
func TestVerifyFailsClosed(t *testing.T) {
	huge := `{"eligible": true, "reason": "` + strings.Repeat("x", 1<<20) + `"}`
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"500", `{"eligible": true}`, http.StatusInternalServerError},
		{"404", `{"eligible": true}`, http.StatusNotFound},
		{"204", ``, http.StatusNoContent},
		{"garbage", `<html>hello</html>`, http.StatusOK},
		{"empty", ``, http.StatusOK},
		{"no eligible field", `{"reason": "yes"}`, http.StatusOK},
		{"eligible not a bool", `{"eligible": "true"}`, http.StatusOK},
		{"null eligible", `{"eligible": null}`, http.StatusOK},
		{"trailing garbage", `{"eligible": true} {"eligible": false}`, http.StatusOK},
		{"huge positive answer", huge, http.StatusOK},
		// Valid JSON within the first 4 KiB, then more: still too large.
		{"padded positive answer", `{"eligible": true}` + strings.Repeat(" ", 8<<10), http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1}})
			err := c.Verify(t.Context(), 1, 1)
			if !errors.Is(err, usercheck.ErrUnavailable) || errors.Is(err, usercheck.ErrRejected) {
				t.Fatalf("Verify: %v, want ErrUnavailable", err)
			}
			if s := c.State(); s != gobreaker.StateOpen {
				t.Errorf("breaker %v after one failure with ConsecutiveFailures 1, want open", s)
			}
		})
	}
}

// An endless answer is cut after a few KiB, not read until the deadline.
func TestVerifyStopsReadingAnEndlessAnswer(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"eligible": true, "reason": "`))
		chunk := []byte(strings.Repeat("x", 1024))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	c := newClient(t, usercheck.Config{BaseURL: srv.URL, Timeout: 10 * time.Second})
	err := c.Verify(t.Context(), 1, 1)
	if !errors.Is(err, usercheck.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Verify: %v, want ErrUnavailable before the deadline", err)
	}
}

func TestVerifyTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	err := newClient(t, usercheck.Config{BaseURL: url}).Verify(t.Context(), 1, 1)
	if !errors.Is(err, usercheck.ErrUnavailable) {
		t.Fatalf("Verify: %v, want ErrUnavailable", err)
	}
}

func TestVerifyBadBaseURL(t *testing.T) {
	for _, base := range []string{"", "localhost:8081", "ftp://host", "http://", "http://host/?q=1", "http://[::1"} {
		err := newClient(t, usercheck.Config{BaseURL: base}).Verify(t.Context(), 1, 1)
		if !errors.Is(err, usercheck.ErrUnavailable) {
			t.Errorf("base %q: Verify: %v, want ErrUnavailable", base, err)
		}
	}
}

// The seed incident: the user service answered after the lock had expired.
// Verify must give up at its deadline, whatever the server does.
func TestVerifyReturnsAtTheDeadline(t *testing.T) {
	const deadline = 100 * time.Millisecond
	_, srv := newStub(t, usercheck.StubConfig{Latency: 5 * time.Second})
	for _, tc := range []struct {
		name    string
		timeout time.Duration // Config.Timeout
		ctx     time.Duration // the caller's deadline; 0 none
	}{
		{"config timeout", deadline, 0},
		{"caller deadline shorter", 10 * time.Second, deadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, usercheck.Config{BaseURL: srv.URL, Timeout: tc.timeout})
			ctx := t.Context()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			err := c.Verify(ctx, 1, 1)
			elapsed := time.Since(start)
			if !errors.Is(err, usercheck.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Verify: %v, want ErrUnavailable and context.DeadlineExceeded", err)
			}
			// Loose on purpose: this checks that the call stops at its deadline
			// instead of the server's 5 s, not how fast it stops.
			if elapsed > deadline+time.Second {
				t.Errorf("Verify returned after %v, deadline %v", elapsed, deadline)
			}
		})
	}
}

func TestBreakerOpensThenHalfOpensAndCloses(t *testing.T) {
	const openTimeout = 200 * time.Millisecond
	stub, srv := newStub(t, usercheck.StubConfig{FailRate: 1})
	var mu sync.Mutex
	var transitions []string
	c := newClient(t, usercheck.Config{
		BaseURL: srv.URL,
		Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 3, OpenTimeout: openTimeout},
		OnStateChange: func(from, to gobreaker.State) {
			mu.Lock()
			defer mu.Unlock()
			transitions = append(transitions, from.String()+">"+to.String())
		},
	})

	for range 3 {
		if err := c.Verify(t.Context(), 1, 1); !errors.Is(err, usercheck.ErrUnavailable) {
			t.Fatalf("Verify: %v, want ErrUnavailable", err)
		}
	}
	if s := c.State(); s != gobreaker.StateOpen {
		t.Fatalf("breaker %v after 3 failures, want open", s)
	}
	hits := stub.Requests()
	for range 10 {
		err := c.Verify(t.Context(), 1, 1)
		if !errors.Is(err, usercheck.ErrUnavailable) || !errors.Is(err, gobreaker.ErrOpenState) {
			t.Fatalf("Verify while open: %v, want ErrUnavailable and ErrOpenState", err)
		}
	}
	if got := stub.Requests(); got != hits {
		t.Errorf("server got %d requests while the breaker was open, want 0", got-hits)
	}

	// A failed trial opens it again.
	time.Sleep(openTimeout + 50*time.Millisecond)
	if s := c.State(); s != gobreaker.StateHalfOpen {
		t.Fatalf("breaker %v after OpenTimeout, want half-open", s)
	}
	if err := c.Verify(t.Context(), 1, 1); !errors.Is(err, usercheck.ErrUnavailable) {
		t.Fatalf("trial Verify: %v, want ErrUnavailable", err)
	}
	if s := c.State(); s != gobreaker.StateOpen {
		t.Fatalf("breaker %v after a failed trial, want open", s)
	}

	// The service recovers; a successful trial closes it.
	if err := stub.SetConfig(usercheck.StubConfig{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(openTimeout + 50*time.Millisecond)
	if err := c.Verify(t.Context(), 1, 1); err != nil {
		t.Fatalf("trial Verify: %v, want nil", err)
	}
	if s := c.State(); s != gobreaker.StateClosed {
		t.Fatalf("breaker %v after a successful trial, want closed", s)
	}

	mu.Lock()
	defer mu.Unlock()
	want := "closed>open open>half-open half-open>open open>half-open half-open>closed"
	if got := strings.Join(transitions, " "); got != want {
		t.Errorf("transitions\n got %s\nwant %s", got, want)
	}
}

func TestHalfOpenLetsOnlyTrialRequestsThrough(t *testing.T) {
	const openTimeout = 100 * time.Millisecond
	release := make(chan struct{})
	var hits atomic.Int64
	var failing atomic.Bool
	failing.Store(true)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		select { // hold the trial so others arrive while it runs
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte(`{"eligible": true}`))
	}))
	c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{
		ConsecutiveFailures: 1, OpenTimeout: openTimeout, HalfOpenRequests: 1,
	}})
	c.Verify(t.Context(), 1, 1)
	failing.Store(false)
	time.Sleep(openTimeout + 50*time.Millisecond)

	trial := make(chan error, 1)
	go func() { trial <- c.Verify(t.Context(), 1, 1) }()
	for hits.Load() < 2 { // wait for the trial to reach the server
		time.Sleep(time.Millisecond)
	}
	err := c.Verify(t.Context(), 2, 1)
	if !errors.Is(err, usercheck.ErrUnavailable) || !errors.Is(err, gobreaker.ErrTooManyRequests) {
		t.Errorf("second Verify while half-open: %v, want ErrTooManyRequests", err)
	}
	close(release)
	if err := <-trial; err != nil {
		t.Fatalf("trial: %v", err)
	}
	if got := hits.Load(); got != 2 {
		t.Errorf("server hits %d, want 2 (the failure and the trial)", got)
	}
}

// A caller that gives up says nothing about the service; a missed deadline does.
func TestCallerCancelIsNotAFailure(t *testing.T) {
	stub, srv := newStub(t, usercheck.StubConfig{Latency: time.Minute})
	for _, tc := range []struct {
		name     string
		stop     func(ctx context.Context) (context.Context, context.CancelFunc)
		wantErr  error
		wantOpen bool
	}{
		{"canceled", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, false},
		// The control: the same wait ended by a deadline opens the breaker,
		// so the test above would notice cancellations being counted.
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 30*time.Millisecond)
		}, context.DeadlineExceeded, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1}})
			ctx, cancel := tc.stop(t.Context())
			defer cancel()
			err := c.Verify(ctx, 1, 1)
			if !errors.Is(err, usercheck.ErrUnavailable) || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Verify: %v, want ErrUnavailable and %v", err, tc.wantErr)
			}
			if open := c.State() == gobreaker.StateOpen; open != tc.wantOpen {
				t.Errorf("breaker %v, want open %v", c.State(), tc.wantOpen)
			}
		})
	}

	t.Run("dead on arrival makes no call", func(t *testing.T) {
		c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1}})
		hits := stub.Requests()
		ctx, cancel := context.WithTimeout(t.Context(), -time.Second)
		defer cancel()
		if err := c.Verify(ctx, 1, 1); !errors.Is(err, usercheck.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Verify: %v", err)
		}
		if stub.Requests() != hits || c.State() != gobreaker.StateClosed {
			t.Errorf("an expired context reached the server or the breaker")
		}
	})
}

func TestMetrics(t *testing.T) {
	_, srv := newStub(t, usercheck.StubConfig{RejectUsers: []int64{2}, FailUsers: []int64{3}})
	reg := prometheus.NewRegistry()
	c := newClient(t, usercheck.Config{BaseURL: srv.URL, Registry: reg, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1}})
	c.Verify(t.Context(), 1, 1) // eligible
	c.Verify(t.Context(), 2, 1) // rejected
	if got := testenv.Metric(t, reg, "seckill_usercheck_breaker_state", nil); got != 0 {
		t.Errorf("breaker_state %v while closed, want 0", got)
	}
	c.Verify(t.Context(), 3, 1) // unavailable; opens
	c.Verify(t.Context(), 1, 1) // open
	c.Verify(t.Context(), 1, 1) // open

	for result, want := range map[string]float64{"eligible": 1, "rejected": 1, "unavailable": 1, "open": 2, "canceled": 0} {
		if got := testenv.Metric(t, reg, "seckill_usercheck_requests_total", map[string]string{"result": result}); got != want {
			t.Errorf("requests_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got := testenv.Metric(t, reg, "seckill_usercheck_breaker_state", nil); got != 2 {
		t.Errorf("breaker_state %v while open, want 2", got)
	}
	if got := testenv.Metric(t, reg, "seckill_usercheck_request_duration_seconds", map[string]string{"result": "eligible"}); got != 1 {
		t.Errorf("duration histogram has %v eligible samples, want 1", got)
	}
}

func TestApproveAll(t *testing.T) {
	var v usercheck.Verifier = usercheck.ApproveAll{}
	if err := v.Verify(t.Context(), 1, 1); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkVerify(b *testing.B) {
	stub, err := usercheck.NewStub(usercheck.StubConfig{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	c := usercheck.New(usercheck.Config{BaseURL: srv.URL})
	defer c.Close()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Verify(context.Background(), 1, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
