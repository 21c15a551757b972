package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// An activity created with "announced": false is activity_not_found to
// buyers on every buyer route until its start, so walking ids does not show
// upcoming sales; ops see it, marked "announced": false; from the start it
// sells as any other.
// Can fail: with the flag ignored, the buyer's GET answers 200 with the
// activity's name before the start.
func TestUnannouncedActivityHiddenUntilItsStart(t *testing.T) {
	s := newStack(t, stackOptions{})
	now := time.Now().UTC()
	startsAt := now.Add(1500 * time.Millisecond)
	r := s.do("POST", "/admin/v1/activities", map[string]any{
		"name": "secret launch", "total_stock": 2, "announced": false,
		"starts_at": startsAt.Format(time.RFC3339Nano), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
	}, admin())
	if r.status != http.StatusCreated || r.body["announced"] != false {
		t.Fatalf("create unannounced: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	if p := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/preload", id), nil, admin()); p.status != http.StatusOK {
		t.Fatalf("preload: %d %s", p.status, p.raw)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", fmt.Sprintf("/api/v1/activities/%d", id)},
		{"POST", fmt.Sprintf("/api/v1/activities/%d/orders", id)},
		{"GET", fmt.Sprintf("/api/v1/activities/%d/orders/mine", id)},
	} {
		if got := s.do(c.method, c.path, nil, buyer(1)); got.status != http.StatusNotFound || got.code() != "activity_not_found" {
			t.Errorf("%s %s before the start: %d %s, want 404 activity_not_found", c.method, c.path, got.status, got.raw)
		}
	}
	if a := s.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", id), nil, admin()); a.status != http.StatusOK {
		t.Errorf("ops audit of the unannounced activity: %d %s", a.status, a.raw)
	}
	for _, bad := range []any{nil, "no", 0} {
		r := s.do("POST", "/admin/v1/activities", map[string]any{
			"name": "x", "total_stock": 1, "announced": bad,
			"starts_at": startsAt.Format(time.RFC3339Nano), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
		}, admin())
		if r.status != http.StatusBadRequest {
			t.Errorf("announced %v: %d %s, want 400", bad, r.status, r.raw)
		}
	}
	time.Sleep(time.Until(startsAt) + 50*time.Millisecond)
	if got := s.do("GET", fmt.Sprintf("/api/v1/activities/%d", id), nil, nil); got.status != http.StatusOK {
		t.Errorf("after the start: %d %s, want 200", got.status, got.raw)
	}
	if got := s.buy(id, 1, nil); got.status != http.StatusCreated {
		t.Errorf("buy after the start: %d %s, want 201", got.status, got.raw)
	}
}
