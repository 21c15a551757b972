package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// TestServiceErrors checks that every code the purchase service returns
// gets its status, its body and, for 429 and 503, Retry-After.
func TestServiceErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter string
	}{
		{"user rejected", seckill.Errorf(seckill.EUserRejected, "not eligible"), 403, seckill.EUserRejected, ""},
		{"activity not found", seckill.Errorf(seckill.EActivityNotFound, "no"), 404, seckill.EActivityNotFound, ""},
		{"not started", seckill.Errorf(seckill.ENotStarted, "later"), 409, seckill.ENotStarted, ""},
		{"ended", seckill.Errorf(seckill.EEnded, "over"), 409, seckill.EEnded, ""},
		{"sold out", seckill.Errorf(seckill.ESoldOut, "gone"), 409, seckill.ESoldOut, ""},
		{"already purchased", &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "you have one", OrderID: "ord-9"}, 409, seckill.EAlreadyPurchased, ""},
		{"busy", &seckill.Error{Code: seckill.EBusy, Message: "locked", RetryAfter: 1500 * time.Millisecond}, 429, seckill.EBusy, "2"},
		{"busy without wait", seckill.Errorf(seckill.EBusy, "locked"), 429, seckill.EBusy, "1"},
		{"busy, short wait", &seckill.Error{Code: seckill.EBusy, Message: "locked", RetryAfter: 10 * time.Millisecond}, 429, seckill.EBusy, "1"},
		{"unavailable", &seckill.Error{Code: seckill.EUnavailable, Message: "breaker open", RetryAfter: 5 * time.Second, Err: errors.New("redis: connection refused")}, 503, seckill.EUnavailable, "5"},
		{"unavailable, wrapped", fmt.Errorf("buy: %w", seckill.Errorf(seckill.EUnavailable, "db down")), 503, seckill.EUnavailable, "1"},
		{"deadline", fmt.Errorf("verify: %w", context.DeadlineExceeded), 503, seckill.EUnavailable, "1"},
		{"internal", seckill.Errorf(seckill.EInternal, "bug"), 500, seckill.EInternal, ""},
		{"plain error", errors.New("dial tcp 10.0.0.7:3306: password=hunter2"), 500, seckill.EInternal, ""},
		{"code outside the contract", seckill.Errorf("weird_code", "?"), 500, seckill.EInternal, ""},
		{"invalid", seckill.Errorf(seckill.EInvalid, "name too long"), 400, seckill.EInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.buy = func(seckill.BuyRequest) (seckill.Order, error) { return seckill.Order{}, tt.err }
			rec := serve(newTestServer(Config{}, f), request{"POST", "/api/v1/activities/1/orders", "", user("42")})
			body := checkError(t, rec, tt.status, tt.code)
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			if tt.code == seckill.EAlreadyPurchased && body["order_id"] != "ord-9" {
				t.Errorf("order_id = %v, want ord-9", body["order_id"])
			}
			if strings.Contains(rec.Body.String(), "hunter2") || strings.Contains(rec.Body.String(), "10.0.0.7") {
				t.Errorf("cause leaked to the client: %s", rec.Body)
			}
		})
	}
}

// TestEveryEndpointMapsErrors runs one service error through each endpoint
// that calls the service.
func TestEveryEndpointMapsErrors(t *testing.T) {
	unavailable := seckill.Errorf(seckill.EUnavailable, "down")
	f := newFake()
	f.activity = func(int64) (seckill.ActivityView, error) { return seckill.ActivityView{}, unavailable }
	f.myOrder = func(int64, int64) (seckill.Order, error) { return seckill.Order{}, unavailable }
	f.create = func(seckill.Activity) (seckill.ActivityView, error) { return seckill.ActivityView{}, unavailable }
	f.preload = func(int64) (int64, error) { return 0, unavailable }
	f.audit = func(int64) (seckill.Audit, error) { return seckill.Audit{}, unavailable }
	f.reconcile = func(int64) (seckill.Reconciliation, error) { return seckill.Reconciliation{}, unavailable }
	h := newTestServer(Config{AdminToken: adminToken}, f)
	for _, r := range []request{
		{"GET", "/api/v1/activities/1", "", nil},
		{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
		{"POST", "/admin/v1/activities", `{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`, admin},
		{"POST", "/admin/v1/activities/1/preload", "", admin},
		{"GET", "/admin/v1/activities/1/audit", "", admin},
		{"POST", "/admin/v1/activities/1/reconcile", "", admin},
	} {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			checkError(t, serve(h, r), 503, seckill.EUnavailable)
		})
	}
	h = newTestServer(Config{AdminToken: adminToken}, newFake())
	for _, r := range []request{
		{"GET", "/api/v1/activities/2", "", nil},
		{"GET", "/api/v1/activities/2/orders/mine", "", user("42")},
		{"POST", "/admin/v1/activities/2/preload", "", admin},
		{"GET", "/admin/v1/activities/2/audit", "", admin},
		{"POST", "/admin/v1/activities/2/reconcile", "", admin},
	} {
		t.Run("not found "+r.method+" "+r.path, func(t *testing.T) {
			checkError(t, serve(h, r), 404, seckill.EActivityNotFound)
		})
	}
	t.Run("order not found", func(t *testing.T) {
		checkError(t, serve(h, request{"GET", "/api/v1/activities/1/orders/mine", "", user("43")}), 404, seckill.EOrderNotFound)
	})
}

func TestReadyzUnavailable(t *testing.T) {
	f := newFake()
	f.ready = func() error { return errors.New("redis: dial tcp 127.0.0.1:6379: connection refused") }
	rec := serve(newTestServer(Config{}, f), request{"GET", "/readyz", "", nil})
	if rec.Code != 503 {
		t.Fatalf("status = %d, want 503", rec.Code)
	}
	body := checkJSON(t, rec)
	if body["status"] != "unavailable" {
		t.Errorf("status field = %v", body["status"])
	}
	if e, _ := body["error"].(map[string]any); e["code"] != seckill.EUnavailable {
		t.Errorf("error = %v, want code unavailable", body["error"])
	}
	if rec.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", rec.Header().Get("Retry-After"))
	}
	if strings.Contains(rec.Body.String(), "6379") {
		t.Errorf("cause leaked: %s", rec.Body)
	}
}

func TestPanicIsJSON500(t *testing.T) {
	f := newFake()
	f.buy = func(seckill.BuyRequest) (seckill.Order, error) { panic("boom: secret state") }
	var logs bytes.Buffer
	h := NewServer(Config{}, withParts(Deps{Service: f, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	rec := serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")})
	checkError(t, rec, 500, seckill.EInternal)
	if strings.Contains(rec.Body.String(), "boom") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("panic leaked to the client: %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("panic not logged: %s", logs.String())
	}
}
