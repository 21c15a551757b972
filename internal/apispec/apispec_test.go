package apispec

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestServiceDocumentLoads(t *testing.T) {
	v, err := Service()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range [][2]string{{"POST", "/api/v1/activities/{id}/orders"}, {"GET", "/openapi.yaml"}, {"POST", "/api/v1/payments/callback"}} {
		if !v.HasOperation(op[0], op[1]) {
			t.Errorf("%s %s is not in the document", op[0], op[1])
		}
	}
	if v.HasOperation("DELETE", "/api/v1/activities/{id}") {
		t.Error("DELETE /api/v1/activities/{id} is in the document")
	}
}

// The transport hands the answer on unchanged and reports each violation.
func TestTransportReportsAndPassesThrough(t *testing.T) {
	v, err := Service()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-ID", "r1")
		if r.URL.Path == "/healthz" {
			_, _ = io.WriteString(w, `{"status":"ok"}`)
			return
		}
		w.WriteHeader(http.StatusTooManyRequests) // no Retry-After
		_, _ = io.WriteString(w, `{"error":{"code":"busy","message":"m"}}`)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var reported []error
	client := &http.Client{Transport: v.Transport(nil, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	})}
	defer client.CloseIdleConnections()

	for _, tt := range []struct {
		method, path, body string
		violations         int
	}{
		{"GET", "/healthz", `{"status":"ok"}`, 0},
		{"POST", "/api/v1/activities/1/orders", `{"error":{"code":"busy","message":"m"}}`, 1},
	} {
		reported = nil
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(body) != tt.body {
			t.Errorf("%s %s: body %q, want %q", tt.method, tt.path, body, tt.body)
		}
		if len(reported) != tt.violations {
			t.Errorf("%s %s: %d violations %v, want %d", tt.method, tt.path, len(reported), reported, tt.violations)
		}
		if tt.violations > 0 && len(reported) > 0 && !strings.Contains(reported[0].Error(), "Retry-After") {
			t.Errorf("violation %v does not name Retry-After", reported[0])
		}
	}

	// A transport error is returned as it is, with nothing reported.
	reported = nil
	srv.Close()
	if _, err := client.Get(srv.URL + "/healthz"); err == nil || len(reported) != 0 {
		t.Errorf("request to a closed server: err %v, reported %v", err, reported)
	}
	if _, ok := v.Transport(nil, nil).(interface{ CloseIdleConnections() }); !ok {
		t.Error("the transport hides CloseIdleConnections from http.Client")
	}
}
