package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// The buyer's X-Request-ID and W3C traceparent reach the user-verification
// service, although the call is made by the activity's batch on its lease.
func TestPurchaseForwardsRequestIDAndTraceparent(t *testing.T) {
	var mu sync.Mutex
	var gotID, gotParent string
	users := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotID, gotParent = r.Header.Get("X-Request-ID"), r.Header.Get("traceparent")
		mu.Unlock()
		w.Write([]byte(`{"eligible":true}`))
	}))
	defer users.Close()
	env := realEnv(t, 0)
	env["SECKILL_USERCHECK_URL"] = users.URL
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	id := createAndPreload(t, base, map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}, 1)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	code, _ := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id),
		map[string]string{"X-User-ID": "9", "X-Request-ID": "rid-buy-9", "traceparent": parent}, "")
	if code != http.StatusCreated {
		t.Fatalf("buy: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotID != "rid-buy-9" {
		t.Errorf("user check got X-Request-ID %q, want rid-buy-9", gotID)
	}
	if len(gotParent) != len(parent) || gotParent[3:35] != parent[3:35] {
		t.Errorf("user check got traceparent %q, want trace %s", gotParent, parent[3:35])
	}
}
