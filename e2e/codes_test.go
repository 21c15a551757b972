package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Every error code of the contract, produced by the real service over HTTP,
// with the exact body shape: {"error":{"code","message"}} and nothing else
// (already_purchased adds "order_id"), Retry-After on 429 and 503.
func TestEveryErrorCodeOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{stub: usercheck.StubConfig{RejectUsers: []int64{666}, FailUsers: []int64{500}},
		breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1000}})
	now := time.Now().UTC()
	act := s.createActivity(1)
	upcoming := s.createActivityWindow(5, now.Add(time.Hour), now.Add(2*time.Hour))
	// Over HTTP an activity that already ended is refused at creation, so
	// this one is made through the service.
	endedAct, err := s.svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai 53%", TotalStock: 5, StartsAt: now.Add(-2 * time.Hour), EndsAt: now.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ended := endedAct.ID
	first := s.buy(act, 1, nil)
	if first.status != http.StatusCreated {
		t.Fatalf("first buy: %d %s", first.status, first.raw)
	}
	other := s.createActivity(3)

	// An admin API with no token configured.
	disabled := *s
	disabled.url = newHTTPServer(t, httpapi.NewServer(httpapi.Config{}, httpapi.Deps{Service: s.svc, Tasks: s.svc, Pricer: s.svc, Rooms: s.svc}))

	orders := func(a int64) string { return fmt.Sprintf("/api/v1/activities/%d/orders", a) }
	cases := []struct {
		name   string
		send   func() response
		status int
		code   string
	}{
		{"bad activity id", func() response { return s.do("POST", "/api/v1/activities/abc/orders", nil, buyer(2)) }, 400, "invalid_request"},
		{"bad quantity", func() response { return s.do("POST", orders(other), `{"quantity":2}`, buyer(2)) }, 400, "invalid_request"},
		{"unknown field", func() response { return s.do("POST", orders(other), `{"qty":1}`, buyer(2)) }, 400, "invalid_request"},
		{"bad idempotency key", func() response {
			return s.buy(other, 2, map[string]string{"Idempotency-Key": strings.Repeat("k", 65)})
		}, 400, "invalid_request"},
		{"no user", func() response { return s.do("POST", orders(other), nil, nil) }, 401, "unauthenticated"},
		{"bad user", func() response { return s.do("POST", orders(other), nil, map[string]string{"X-User-ID": "-3"}) }, 401, "unauthenticated"},
		{"admin without token", func() response { return s.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", act), nil, nil) }, 401, "unauthenticated"},
		{"admin wrong token", func() response {
			return s.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", act), nil, map[string]string{"Authorization": "Bearer nope"})
		}, 401, "unauthenticated"},
		{"admin disabled", func() response {
			return disabled.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", act), nil, admin())
		}, 403, "admin_disabled"},
		{"user rejected", func() response { return s.buy(other, 666, nil) }, 403, "user_rejected"},
		{"no activity", func() response { return s.buy(999_999_999, 2, nil) }, 404, "activity_not_found"},
		{"no activity (GET)", func() response { return s.do("GET", "/api/v1/activities/999999999", nil, nil) }, 404, "activity_not_found"},
		{"no order", func() response { return s.do("GET", orders(other)+"/mine", nil, buyer(2)) }, 404, "order_not_found"},
		{"not started", func() response { return s.buy(upcoming, 2, nil) }, 409, "not_started"},
		{"ended", func() response { return s.buy(ended, 2, nil) }, 409, "ended"},
		{"sold out", func() response { return s.buy(act, 2, nil) }, 409, "sold_out"},
		{"already purchased", func() response { return s.buy(act, 1, nil) }, 409, "already_purchased"},
		{"too large", func() response {
			return s.do("POST", orders(other), `{"quantity":1,"x":"`+strings.Repeat("a", 70<<10)+`"}`, buyer(2))
		}, 413, "request_too_large"},
		{"busy", func() response {
			lk, err := s.locks.Obtain(context.Background(), keys.NewSpace(s.prefix).Lock(other), 5*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Release(context.Background())
			return s.buy(other, 3, nil)
		}, 429, "busy"},
		{"unavailable", func() response { return s.buy(other, 500, nil) }, 503, "unavailable"},
		// Last: it leaves this address limited on the admin API for a minute.
		{"too many admin failures", func() response {
			var r response
			for range httpapi.AdminFailureLimit + 1 { // two failures above count too
				r = s.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", act), nil, map[string]string{"Authorization": "Bearer nope"})
				if r.status != http.StatusUnauthorized {
					break
				}
			}
			return r
		}, 429, "too_many_requests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.send()
			if r.status != c.status || r.code() != c.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			want := 1
			if c.code == "already_purchased" {
				want = 3
				if r.body["order_id"] != first.body["order_id"] || r.body["order_status"] != "created" {
					t.Errorf("order_id %v, order_status %v; want %v and created", r.body["order_id"], r.body["order_status"], first.body["order_id"])
				}
			}
			if len(r.body) != want {
				t.Errorf("body has keys beyond the contract: %s", r.raw)
			}
			e, _ := r.body["error"].(map[string]any)
			if msg, _ := e["message"].(string); len(e) != 2 || msg == "" {
				t.Errorf("error object %v, want exactly code and a message", e)
			}
			if (c.status == 429 || c.status == 503) && r.header.Get("Retry-After") == "" {
				t.Errorf("%d without Retry-After", c.status)
			}
		})
	}
	_ = lock.ErrNotHeld
}
