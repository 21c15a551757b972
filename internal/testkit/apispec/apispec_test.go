package apispec

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seckill-oss/seckill/docs"
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

// BenchmarkCheck is the cost of checking one purchase answer, which every
// HTTP and e2e test pays per request: in full (a 201, whose order id differs
// every time), and for an answer seen before but for its X-Request-ID.
func BenchmarkCheck(b *testing.B) {
	v, err := Service()
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("POST", "http://seckill.test/api/v1/activities/1/orders", nil)
	b.Run("distinct", func(b *testing.B) {
		h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r1"}}
		n := 0
		for b.Loop() {
			n++
			body := fmt.Appendf(nil, `{"order_id":"o-%d","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:05:00Z"}`, n)
			if err := v.Check(req, http.StatusCreated, h, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("repeated", func(b *testing.B) {
		body := []byte(`{"error":{"code":"busy","message":"another purchase holds this activity; try again"}}`)
		n := 0
		for b.Loop() {
			n++
			h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}, "X-Request-Id": {fmt.Sprint("r", n)}}
			if err := v.Check(req, http.StatusTooManyRequests, h, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// An answer remembered as good is checked in full again when its
// X-Request-ID is missing or malformed.
func TestRememberedAnswerStillNeedsRequestID(t *testing.T) {
	v, err := New(docs.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "http://seckill.test/healthz", nil)
	body := []byte(`{"status":"ok"}`)
	for _, id := range []string{"a", "b"} {
		if err := v.Check(req, 200, http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {id}}, body); err != nil {
			t.Fatal(err)
		}
	}
	for name, h := range map[string]http.Header{
		"missing":   {"Content-Type": {"application/json"}},
		"malformed": {"Content-Type": {"application/json"}, "X-Request-Id": {"has space"}},
	} {
		if err := v.Check(req, 200, h, body); err == nil {
			t.Errorf("X-Request-ID %s: no violation", name)
		}
	}
}
