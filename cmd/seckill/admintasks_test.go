package main

import (
	"net/http"
	"regexp"
	"testing"
)

// The admin tasks and the buyer's cancel on the built service (embedded
// stores, in-process payment stub), every answer checked against the
// OpenAPI document by call's transport.
func TestAdminTasksAndCancel(t *testing.T) {
	p := start(t, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0"})
	base := "http://" + p.addr()
	m := regexp.MustCompile(`generated for this run\): (\w+)`).FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no token in the banner:\n%s", p.stdout)
	}
	admin := map[string]string{"Authorization": "Bearer " + m[1]}
	buyer := func(id string) map[string]string { return map[string]string{"X-User-ID": id} }

	for _, u := range []string{"1", "2"} {
		if code, _ := call(t, "POST", base+"/api/v1/activities/1/orders", buyer(u), ""); code != http.StatusCreated {
			t.Fatalf("buy as %s: %d", u, code)
		}
	}
	code, act := call(t, "GET", base+"/api/v1/activities/1", nil, "")
	if code != http.StatusOK || act["remaining_stock"] != 98.0 {
		t.Fatalf("activity after two buys: %d %v", code, act)
	}

	// Cancel: the unit is back at once, once.
	code, o := call(t, "POST", base+"/api/v1/activities/1/orders/mine/cancel", buyer("1"), "")
	if code != http.StatusOK || o["status"] != "expired" {
		t.Fatalf("cancel: %d %v", code, o)
	}
	if _, act = call(t, "GET", base+"/api/v1/activities/1", nil, ""); act["remaining_stock"] != 99.0 {
		t.Fatalf("remaining after cancel: %v, want 99", act["remaining_stock"])
	}
	if code, _ := call(t, "POST", base+"/api/v1/activities/1/orders/mine/cancel", buyer("1"), ""); code != http.StatusConflict {
		t.Fatalf("second cancel: %d, want 409", code)
	}
	if _, act = call(t, "GET", base+"/api/v1/activities/1", nil, ""); act["remaining_stock"] != 99.0 {
		t.Fatalf("remaining after a second cancel: %v, want 99 (the unit came back twice)", act["remaining_stock"])
	}
	if code, _ := call(t, "POST", base+"/api/v1/activities/1/orders/mine/cancel", buyer("3"), ""); code != http.StatusNotFound {
		t.Fatalf("cancel without an order: %d, want 404", code)
	}

	// Stock: never below sold (1 created order), top up and reduce.
	if code, _ := call(t, "POST", base+"/admin/v1/activities/1/stock", admin, `{"total_stock":1}`); code != http.StatusOK {
		t.Fatalf("reduce to the one unit sold: %d", code)
	}
	if _, act = call(t, "GET", base+"/api/v1/activities/1", nil, ""); act["remaining_stock"] != 0.0 {
		t.Fatalf("remaining at total = sold: %v", act["remaining_stock"])
	}
	if code, _ := call(t, "POST", base+"/api/v1/activities/1/orders", buyer("4"), ""); code != http.StatusConflict {
		t.Fatalf("buy with nothing left after the reduction: %d, want 409", code)
	}
	code, adj := call(t, "POST", base+"/admin/v1/activities/1/stock", admin, `{"total_stock":5}`)
	if code != http.StatusOK || adj["remaining_stock"] != 4.0 || adj["sold"] != 1.0 || adj["total_stock_before"] != 1.0 {
		t.Fatalf("top up: %d %v", code, adj)
	}
	if code, _ := call(t, "POST", base+"/api/v1/activities/1/orders", buyer("4"), ""); code != http.StatusCreated {
		t.Fatalf("buy after the top-up: %d", code)
	}
	if code, _ := call(t, "POST", base+"/admin/v1/activities/1/stock", admin, `{"total_stock":1}`); code != http.StatusBadRequest {
		t.Fatalf("reduce below the 2 sold: %d, want 400", code)
	}
	code, audit := call(t, "GET", base+"/admin/v1/activities/1/audit", admin, "")
	if code != http.StatusOK || audit["consistent"] != true || audit["total_stock"] != 5.0 || audit["orders"] != 2.0 {
		t.Fatalf("audit after the adjustments: %d %v", code, audit)
	}

	// Listings.
	code, list := call(t, "GET", base+"/admin/v1/activities?limit=10", admin, "")
	// The demo's two: the plain one and the one with a waiting room.
	if acts, _ := list["activities"].([]any); code != http.StatusOK || len(acts) != 2 || list["next_cursor"] != nil {
		t.Fatalf("list activities: %d %v", code, list)
	}
	code, list = call(t, "GET", base+"/admin/v1/activities/1/orders?status=expired", admin, "")
	if os, _ := list["orders"].([]any); code != http.StatusOK || len(os) != 1 {
		t.Fatalf("expired orders: %d %v", code, list)
	}
	code, list = call(t, "GET", base+"/admin/v1/activities/1/orders?limit=1", admin, "")
	if code != http.StatusOK || list["next_cursor"] == nil {
		t.Fatalf("first page of one: %d %v", code, list)
	}
	code, list = call(t, "GET", base+"/admin/v1/activities/1/orders?limit=1&cursor="+list["next_cursor"].(string), admin, "")
	if os, _ := list["orders"].([]any); code != http.StatusOK || len(os) != 1 {
		t.Fatalf("second page: %d %v", code, list)
	}
	if code, _ := call(t, "GET", base+"/admin/v1/activities/1/orders?status=lost", admin, ""); code != http.StatusBadRequest {
		t.Fatalf("unknown status: %d, want 400", code)
	}
	// A refund of an order that needs none.
	if code, _ := call(t, "POST", base+"/admin/v1/orders/"+o["order_id"].(string)+"/refund", admin, `{"by":"alice"}`); code != http.StatusConflict {
		t.Fatalf("refund of an expired order: %d, want 409", code)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
}
