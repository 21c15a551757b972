package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

func TestSuccessBodies(t *testing.T) {
	pad := `{"quantity":1}` + strings.Repeat(" ", MaxBodyBytes-len(`{"quantity":1}`))
	tests := []struct {
		name   string
		req    request
		status int
		want   string
	}{
		{"activity", request{"GET", "/api/v1/activities/1", "", nil}, 200, activityJSON},
		{"buy, empty body", request{"POST", "/api/v1/activities/1/orders", "", user("42")}, 201, orderJSON},
		{"buy, {}", request{"POST", "/api/v1/activities/1/orders", "{}", user("42")}, 201, orderJSON},
		{"buy, quantity 1", request{"POST", "/api/v1/activities/1/orders", `{"quantity":1}`, user("42")}, 201, orderJSON},
		{"buy, spaced", request{"POST", "/api/v1/activities/1/orders", " \r\n\t{ \"quantity\" : 1 }\n", user("42")}, 201, orderJSON},
		{"buy, whitespace body", request{"POST", "/api/v1/activities/1/orders", " \n", user("42")}, 201, orderJSON},
		{"buy, body of exactly 64 KiB", request{"POST", "/api/v1/activities/1/orders", pad, user("42")}, 201, orderJSON},
		{"buy, largest user id", request{"POST", "/api/v1/activities/1/orders", "", user("9223372036854775807")}, 201,
			`{"order_id":"ord-1","activity_id":1,"user_id":9223372036854775807,"status":"created","quantity":1,"created_at":"2026-11-22T10:05:00Z"}`},
		{"buy, idempotency key of 64", request{"POST", "/api/v1/activities/1/orders", "", user("42", "Idempotency-Key", strings.Repeat("k", 64))}, 201, orderJSON},
		{"mine", request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}, 200,
			`{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:00:00Z"}`},
		{"create", request{"POST", "/admin/v1/activities",
			`{"name":"Moutai 53%","total_stock":100,"starts_at":"2026-11-22T18:00:00+08:00","ends_at":"2026-11-22T11:00:00Z"}`, admin}, 201,
			`{"id":7,"name":"Moutai 53%","total_stock":100,"remaining_stock":100,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","status":"upcoming","per_user_limit":1}`},
		{"create, 128 runes of 3 bytes", request{"POST", "/admin/v1/activities",
			`{"name":"` + strings.Repeat("茅", 128) + `","total_stock":10000000,"starts_at":"2026-11-22T10:00:00.5Z","ends_at":"2026-11-22T11:00:00Z"}`, admin}, 201,
			`{"id":7,"name":"` + strings.Repeat("茅", 128) + `","total_stock":10000000,"remaining_stock":10000000,"starts_at":"2026-11-22T10:00:00.5Z","ends_at":"2026-11-22T11:00:00Z","status":"upcoming","per_user_limit":1}`},
		{"create, lower-case bearer", request{"POST", "/admin/v1/activities",
			`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T10:00:01Z"}`, []string{"Authorization", "bearer " + adminToken}}, 201,
			`{"id":7,"name":"x","total_stock":1,"remaining_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T10:00:01Z","status":"upcoming","per_user_limit":1}`},
		{"preload", request{"POST", "/admin/v1/activities/1/preload", "", admin}, 200, `{"activity_id":1,"remaining_stock":100}`},
		{"audit", request{"GET", "/admin/v1/activities/1/audit", "", admin}, 200,
			`{"activity_id":1,"total_stock":100,"orders":100,"units":0,"redis_remaining":0,"oversold":false,"consistent":true,"expired":0,"refund_required":0,"admitted_open":0,"events_pending":0}`},
		{"reconcile", request{"POST", "/admin/v1/activities/1/reconcile", "", admin}, 200,
			`{"activity_id":1,"total_stock":100,"orders":60,"before":39,"after":40,"changed":true}`},
		{"healthz", request{"GET", "/healthz", "", nil}, 200, `{"status":"ok"}`},
		{"readyz", request{"GET", "/readyz", "", nil}, 200, `{"status":"ok"}`},
	}
	h := newTestServer(Config{AdminToken: adminToken}, newFake())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBody(t, serve(h, tt.req), tt.status, tt.want)
		})
	}
}

func TestReconcileNotLoaded(t *testing.T) {
	f := newFake()
	f.reconcile = func(int64) (seckill.Reconciliation, error) {
		return seckill.Reconciliation{ActivityID: 1, TotalStock: 100, Orders: 3, Before: -1, After: 97, Changed: true}, nil
	}
	rec := serve(newTestServer(Config{AdminToken: adminToken}, f), request{"POST", "/admin/v1/activities/1/reconcile", "", admin})
	checkBody(t, rec, 200, `{"activity_id":1,"total_stock":100,"orders":3,"before":null,"after":97,"changed":true}`)
}

// TestBuyPassesRequest checks what reaches the purchase service.
func TestBuyPassesRequest(t *testing.T) {
	f := newFake()
	var got seckill.BuyRequest
	f.buy = func(r seckill.BuyRequest) (seckill.Order, error) {
		got = r
		return seckill.Order{ID: "o", ActivityID: r.ActivityID, UserID: r.UserID, Status: "created", CreatedAt: t0}, nil
	}
	rec := serve(newTestServer(Config{}, f), request{"POST", "/api/v1/activities/9223372036854775807/orders", "",
		user("1234567890123", "Idempotency-Key", "!~key-1")})
	if rec.Code != 201 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := seckill.BuyRequest{ActivityID: 9223372036854775807, UserID: 1234567890123, IdempotencyKey: "!~key-1"}
	if got != want {
		t.Errorf("Buy got %+v, want %+v", got, want)
	}
}

func TestTimesAreUTC(t *testing.T) {
	f := newFake()
	shanghai := time.FixedZone("CST", 8*3600)
	f.myOrder = func(int64, int64) (seckill.Order, error) {
		return seckill.Order{ID: "o", ActivityID: 1, UserID: 42, Status: "created", CreatedAt: time.Date(2026, 11, 22, 18, 0, 0, 123456000, shanghai)}, nil
	}
	rec := serve(newTestServer(Config{}, f), request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")})
	checkBody(t, rec, 200, `{"order_id":"o","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:00:00.123456Z"}`)
}

func TestMessagesAreNotHTMLEscaped(t *testing.T) {
	rec := serve(newTestServer(Config{AdminToken: adminToken}, newFake()), request{"GET", "/admin/v1/activities/1/audit", "", nil})
	if b := rec.Body.String(); !strings.Contains(b, "Bearer <token>") || strings.Contains(b, `\u003c`) {
		t.Errorf("admin 401 body %s, want the message with <token> as written", b)
	}
}

// The contract accepts an activity that has already ended (it answers
// ended); refusing it would break clients that create one on purpose.
func TestCreateEndedActivityIsAccepted(t *testing.T) {
	body := `{"name":"late","total_stock":1,"starts_at":"2020-01-01T00:00:00Z","ends_at":"2020-01-02T00:00:00Z"}`
	rec := serve(newTestServer(Config{AdminToken: adminToken}, newFake()), request{"POST", "/admin/v1/activities", body, admin})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create an ended activity: %d %s, want 201", rec.Code, rec.Body)
	}
}
