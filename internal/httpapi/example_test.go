package httpapi

import (
	"fmt"
	"net/http/httptest"
)

func ExampleNewServer() {
	// newFake stands in for the purchase path and the books.
	h := NewServer(Config{AdminToken: ""}, withParts(Deps{Service: newFake()}))

	buy := httptest.NewRequest("POST", "/api/v1/activities/1/orders", nil)
	buy.Header.Set("X-User-ID", "42")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, buy)
	fmt.Println(rec.Code, rec.Body)

	// Without an admin token the ops API is closed, not open.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/admin/v1/activities/1/preload", nil))
	fmt.Println(rec.Code, rec.Body)
	// Output:
	// 201 {"order_id":"ord-1","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:05:00Z"}
	// 403 {"error":{"code":"admin_disabled","message":"the ops API is disabled: no admin token is configured"}}
}
