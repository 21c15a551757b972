package outbound_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seckill-oss/seckill/internal/outbound"
)

func TestParseBaseNeverShowsThePassword(t *testing.T) {
	for _, raw := range []string{
		"http://user:s3cret@host:1/x?q=1", // a query: refused, shown redacted
		"ftp://user:s3cret@host",          // another scheme
		"http://user:s3cret@host:port",    // does not parse
	} {
		_, err := outbound.ParseBase(raw)
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error shows the password: %v", raw, err)
		}
	}
	if u, err := outbound.ParseBase("https://host:8443/base/"); err != nil || u.String() != "https://host:8443/base" {
		t.Errorf("good base: %v, %v", u, err)
	}
}

func TestGetReadsUpToTheLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != "k" || r.Header.Get("Accept") != "application/json" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = w.Write([]byte(strings.Repeat("x", 10)))
	}))
	defer srv.Close()
	base, err := outbound.ParseBase(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{"X-Key": {"k"}}
	if status, body, err := outbound.Get(t.Context(), srv.Client(), base, hdr, 10); err != nil || status != 200 || len(body) != 10 {
		t.Errorf("answer of exactly the limit: %d %q %v", status, body, err)
	}
	if _, _, err := outbound.Get(t.Context(), srv.Client(), base, hdr, 9); err == nil {
		t.Error("a 200 answer over the limit was read")
	}
	missing := base.JoinPath("missing")
	if status, _, err := outbound.Get(t.Context(), srv.Client(), missing, hdr, 5); err != nil || status != http.StatusNotFound {
		t.Errorf("a 404 with a long body: %d %v, want 404 and no error", status, err)
	}
	if status, _, _ := outbound.Get(t.Context(), srv.Client(), base, nil, 10); status != http.StatusUnauthorized {
		t.Errorf("without the header: %d, want 401", status)
	}
}

// TestClientDoesNotFollowRedirects: a service answering 3xx cannot send the
// request (and its API key) elsewhere; the 3xx is the answer.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"eligible":true}`))
	}))
	defer target.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", code)
		}))
		base, err := outbound.ParseBase(redirector.URL)
		if err != nil {
			t.Fatal(err)
		}
		c := outbound.Client(1)
		status, _, err := outbound.Get(t.Context(), c, base, http.Header{"X-Api-Key": {"k"}}, 1024)
		c.CloseIdleConnections()
		redirector.Close()
		if err != nil || status != code {
			t.Errorf("redirect %d: answer %d, %v; want the %d itself", code, status, err, code)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect's target was asked %d times, want 0", n)
	}
}
