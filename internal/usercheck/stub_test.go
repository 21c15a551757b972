package usercheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// do sends one request to h directly and returns the status and body.
func do(t *testing.T, h http.Handler, method, target, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

func TestStubAnswers(t *testing.T) {
	stub, err := usercheck.NewStub(usercheck.StubConfig{Seed: 1, RejectUsers: []int64{2}, FailUsers: []int64{3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		status int
		body   string
	}{
		{"/v1/users/1/eligibility?activity_id=7", 200, `{"eligible":true}`},
		{"/v1/users/2/eligibility?activity_id=7", 200, `{"eligible":false,"reason":"stub: configured rejection"}`},
		{"/v1/users/3/eligibility?activity_id=7", 500, `{"error":{"code":"internal","message":"stub: configured failure"}}`},
		{"/v1/users/x/eligibility?activity_id=7", 400, ""},
		{"/v1/users/-1/eligibility?activity_id=7", 400, ""},
		{"/v1/users/1/eligibility", 400, ""},
		{"/v1/users/1/eligibility?activity_id=0", 400, ""},
		{"/healthz", 200, `{"status":"ok"}`},
	} {
		status, body := do(t, stub, http.MethodGet, tc.target, "")
		if status != tc.status || (tc.body != "" && strings.TrimSpace(body) != tc.body) {
			t.Errorf("GET %s: %d %s, want %d %s", tc.target, status, body, tc.status, tc.body)
		}
	}
}

func TestNewStubRefusesBadConfig(t *testing.T) {
	for _, cfg := range []usercheck.StubConfig{{RejectRate: 1.5}, {FailRate: -0.1}, {Latency: -time.Second}} {
		if _, err := usercheck.NewStub(cfg); err == nil {
			t.Errorf("NewStub(%+v) accepted", cfg)
		}
	}
}

// A load test takes verification down in the middle of a sale and brings it
// back, over HTTP.
func TestStubConfigAtRunTime(t *testing.T) {
	_, srv := newStub(t, usercheck.StubConfig{Latency: 5 * time.Millisecond, RejectUsers: []int64{9}})
	c := newClient(t, usercheck.Config{BaseURL: srv.URL, Breaker: usercheck.BreakerConfig{ConsecutiveFailures: 100}})
	put := func(body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, srv.URL+"/stub/config", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	getConfig := func() map[string]any {
		t.Helper()
		resp, err := http.Get(srv.URL + "/stub/config")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	if err := c.Verify(t.Context(), 1, 1); err != nil {
		t.Fatalf("before: %v", err)
	}
	if status, body := put(`{"fail_rate": 1}`); status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	if err := c.Verify(t.Context(), 1, 1); !errors.Is(err, usercheck.ErrUnavailable) {
		t.Fatalf("while down: %v, want ErrUnavailable", err)
	}
	// Fields absent from the PUT kept their values.
	if m := getConfig(); m["fail_rate"] != 1.0 || m["latency"] != "5ms" || !reflect.DeepEqual(m["reject_users"], []any{9.0}) {
		t.Errorf("config after PUT: %v", m)
	}
	if status, body := put(`{"fail_rate": 0, "latency": "300us", "slow_latency": "2s"}`); status != 200 {
		t.Fatalf("PUT: %d %s", status, body)
	}
	if err := c.Verify(t.Context(), 1, 1); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	if m := getConfig(); m["latency"] != "300µs" || m["slow_latency"] != "2s" {
		t.Errorf("config after PUT: %v", m)
	}

	for _, bad := range []string{`{"fail_rate": 2}`, `{"latency": "soon"}`, `{"latency": 300}`, `{"fail_rat": 1}`, `{`, `{"slow_rate": -1}`} {
		if status, _ := put(bad); status != http.StatusBadRequest {
			t.Errorf("PUT %s: %d, want 400", bad, status)
		}
	}
	if m := getConfig(); m["fail_rate"] != 0.0 {
		t.Errorf("a refused PUT changed the config: %v", m)
	}
}

func TestStubRates(t *testing.T) {
	const n = 2000
	stub, err := usercheck.NewStub(usercheck.StubConfig{
		Seed: 7, RejectRate: 0.3, FailRate: 0.1, SlowRate: 0.1, SlowLatency: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed, rejected, slow int
	for range n {
		start := time.Now()
		status, body := do(t, stub, http.MethodGet, "/v1/users/1/eligibility?activity_id=1", "")
		if time.Since(start) >= 2*time.Millisecond {
			slow++
		}
		switch {
		case status == 500:
			failed++
		case strings.Contains(body, `"eligible":false`):
			rejected++
		}
	}
	for _, tc := range []struct {
		name      string
		got       int
		want, tol float64
	}{
		{"failed", failed, 0.1, 0.03},
		{"rejected", rejected, 0.9 * 0.3, 0.04}, // rejections are drawn among the answers that do not fail
		{"slow", slow, 0.1, 0.04},               // a fast answer seldom takes 2ms, even under -race
	} {
		if got := float64(tc.got) / n; got < tc.want-tc.tol || got > tc.want+tc.tol {
			t.Errorf("%s: %.3f of answers, want %.2f±%.2f", tc.name, got, tc.want, tc.tol)
		}
	}
	if stub.Requests() != n {
		t.Errorf("Requests() = %d, want %d", stub.Requests(), n)
	}
}

func TestStubSeedReplays(t *testing.T) {
	answers := func() string {
		stub, err := usercheck.NewStub(usercheck.StubConfig{Seed: 42, RejectRate: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for range 100 {
			_, body := do(t, stub, http.MethodGet, "/v1/users/1/eligibility?activity_id=1", "")
			b.WriteString(body)
		}
		return b.String()
	}
	if first, second := answers(), answers(); first != second {
		t.Error("two stubs with one seed answered differently")
	}
}

func TestStubSlowAnswerStopsWhenClientLeaves(t *testing.T) {
	stub, err := usercheck.NewStub(usercheck.StubConfig{Seed: 1, SlowUsers: []int64{5}, SlowLatency: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/users/5/eligibility?activity_id=1", nil)
		stub.ServeHTTP(httptest.NewRecorder(), req)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow answer kept waiting after its client left")
	}
}
