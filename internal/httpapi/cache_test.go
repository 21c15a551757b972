package httpapi

import (
	"testing"

	"github.com/seckill-oss/seckill"
)

// TestCacheHeaders: answers that depend on X-User-ID are never stored by a
// shared cache and vary by the header; the public activity read may be kept
// a second; every error is no-store.
func TestCacheHeaders(t *testing.T) {
	f := newFake()
	h := newTestServer(Config{AdminToken: adminToken}, f)
	held := newFake()
	held.buy = func(seckill.BuyRequest) (seckill.Order, error) {
		return seckill.Order{}, &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "held", OrderID: "ord-1", OrderStatus: seckill.OrderStatusCreated}
	}
	hHeld := newTestServer(Config{}, held)
	tests := []struct {
		name        string
		h           bool // true: the server whose user holds an order
		req         request
		status      int
		cache, vary string
	}{
		{"activity", false, request{"GET", "/api/v1/activities/1", "", nil}, 200, cachePublicShort, ""},
		{"unknown activity", false, request{"GET", "/api/v1/activities/2", "", nil}, 404, cacheNoStore, ""},
		{"bad activity id", false, request{"GET", "/api/v1/activities/x", "", nil}, 400, cacheNoStore, ""},
		{"purchase 201", false, request{"POST", "/api/v1/activities/1/orders", "", user("42")}, 201, cacheNoStore, "X-User-ID"},
		{"purchase 409 with order_id", true, request{"POST", "/api/v1/activities/1/orders", "", user("42")}, 409, cacheNoStore, "X-User-ID"},
		{"purchase 401", false, request{"POST", "/api/v1/activities/1/orders", "", nil}, 401, cacheNoStore, "X-User-ID"},
		{"orders/mine", false, request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}, 200, cacheNoStore, "X-User-ID"},
		{"admin", false, request{"GET", "/admin/v1/activities/1/audit", "", admin}, 200, cacheNoStore, ""},
		{"unknown path", false, request{"GET", "/nowhere", "", nil}, 404, cacheNoStore, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := h
			if tt.h {
				srv = hHeld
			}
			rec := serve(srv, tt.req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Header().Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			if got := rec.Header().Get("Vary"); got != tt.vary {
				t.Errorf("Vary %q, want %q", got, tt.vary)
			}
		})
	}
}
