package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Quantity per buyer (docs/API.md "Quantity per buyer") over HTTP, on real
// Redis and MariaDB: the activity carries per_user_limit, an order carries
// its quantity and amount, an ask above the limit is 400, one above what is
// left is 409 not_enough_stock with remaining_stock, and the audit counts
// units.
func TestQuantityPerBuyerOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{})
	now := time.Now().UTC()
	r := s.do("POST", "/admin/v1/activities", map[string]any{
		"name": "Moutai 53%, at most 3", "total_stock": 5, "per_user_limit": 3, "price_minor": 1999, "currency": "EUR",
		"starts_at": now.Add(-time.Minute).Format(time.RFC3339), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
	}, admin())
	if r.status != http.StatusCreated || r.body["per_user_limit"] != 3.0 {
		t.Fatalf("create with per_user_limit 3: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	path := fmt.Sprintf("/api/v1/activities/%d/orders", id)
	if g := s.do("GET", fmt.Sprintf("/api/v1/activities/%d", id), nil, nil); g.body["per_user_limit"] != 3.0 {
		t.Errorf("buyer's GET: %s, want per_user_limit 3", g.raw)
	}
	if b := s.do("POST", path, map[string]any{"quantity": 4}, buyer(1)); b.status != http.StatusBadRequest || b.code() != "invalid_request" {
		t.Errorf("4 of limit 3: %d %s, want 400 invalid_request", b.status, b.raw)
	}
	b := s.do("POST", path, map[string]any{"quantity": 3}, buyer(1))
	if b.status != http.StatusCreated || b.body["quantity"] != 3.0 || b.body["amount_minor"] != 3*1999.0 || b.body["price_minor"] != 1999.0 {
		t.Fatalf("3 of 5: %d %s, want 201 with quantity 3 and amount_minor 5997", b.status, b.raw)
	}
	if b := s.do("POST", path, map[string]any{"quantity": 1}, buyer(1)); b.status != http.StatusConflict || b.code() != "already_purchased" {
		t.Errorf("the buyer again: %d %s, want 409 already_purchased", b.status, b.raw)
	}
	b = s.do("POST", path, map[string]any{"quantity": 3}, buyer(2))
	if b.status != http.StatusConflict || b.code() != "not_enough_stock" || b.body["remaining_stock"] != 2.0 {
		t.Errorf("3 of the 2 left: %d %s, want 409 not_enough_stock with remaining_stock 2", b.status, b.raw)
	}
	if b := s.do("POST", path, map[string]any{"quantity": 2}, buyer(2)); b.status != http.StatusCreated || b.body["quantity"] != 2.0 {
		t.Errorf("2 of the 2 left: %d %s", b.status, b.raw)
	}
	if b := s.do("POST", path, nil, buyer(3)); b.status != http.StatusConflict || b.code() != "sold_out" {
		t.Errorf("1 of none: %d %s, want 409 sold_out", b.status, b.raw)
	}
	if a := s.audit(id); a.Units != 5 || a.Orders != 2 || !a.Consistent || a.Oversold {
		t.Errorf("audit %+v: want 5 units in 2 orders, consistent", a)
	}
}
