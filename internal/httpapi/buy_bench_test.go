package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkBuy measures the edge's own cost per purchase (routing, parsing,
// limits, logging to a discarding handler, metrics) with a service that
// answers at once.
func BenchmarkBuy(b *testing.B) {
	h := NewServer(Config{UserRate: 1e9, UserBurst: 1 << 30, GlobalRate: 1e9, GlobalBurst: 1 << 30}, withParts(Deps{Service: newFake()}))
	body := `{"quantity":1}`
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/api/v1/activities/1/orders", strings.NewReader(body))
			req.Header.Set("X-User-ID", "42")
			req.Header.Set("Idempotency-Key", "bench-key")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
}
