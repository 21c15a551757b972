package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	env := func(k string) string {
		if k == "SECKILL_HTTP_ADDR" {
			return addr
		}
		return ""
	}
	if err := run(t.Context(), []string{"seckill", "healthcheck"}, env, io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck of a ready service: %v", err)
	}
	ready.Store(false)
	if err := run(t.Context(), []string{"seckill", "healthcheck"}, env, io.Discard, io.Discard); err == nil {
		t.Fatal("healthcheck of a service answering 503 succeeded")
	}
}

func TestLocalReadyURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"10.0.0.5:8080":  "http://10.0.0.5:8080/readyz",
		"127.0.0.1:8081": "http://127.0.0.1:8081/readyz",
	} {
		if got, err := localReadyURL(addr); err != nil || got != want {
			t.Errorf("localReadyURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := localReadyURL("8080"); err == nil {
		t.Error("localReadyURL(\"8080\") succeeded")
	}
}
