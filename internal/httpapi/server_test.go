package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no debug printing of routes
	code := m.Run()
	if reportAPIViolations() && code == 0 {
		code = 1
	}
	os.Exit(code)
}

var (
	t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// fakeService answers like a purchase service holding activity 1 (total 100,
// 37 left) and nothing else; tests replace single methods.
type fakeService struct {
	buy       func(seckill.BuyRequest) (seckill.Order, error)
	activity  func(id int64) (seckill.ActivityView, error)
	myOrder   func(activityID, userID int64) (seckill.Order, error)
	create    func(seckill.Activity) (seckill.ActivityView, error)
	preload   func(id int64) (int64, error)
	audit     func(id int64) (seckill.Audit, error)
	reconcile func(id int64) (seckill.Reconciliation, error)
	ready     func() error
}

func notFound(id int64) error {
	return seckill.Errorf(seckill.EActivityNotFound, "no activity %d", id)
}

func newFake() *fakeService {
	act := seckill.Activity{ID: 1, Name: "Moutai 53%", TotalStock: 100, StartsAt: t0, EndsAt: t1}
	return &fakeService{
		buy: func(r seckill.BuyRequest) (seckill.Order, error) {
			if r.ActivityID != 1 {
				return seckill.Order{}, notFound(r.ActivityID)
			}
			return seckill.Order{ID: "ord-1", ActivityID: r.ActivityID, UserID: r.UserID, Status: seckill.OrderStatusCreated,
				IdempotencyKey: r.IdempotencyKey, CreatedAt: t0.Add(5 * time.Minute)}, nil
		},
		activity: func(id int64) (seckill.ActivityView, error) {
			if id != 1 {
				return seckill.ActivityView{}, notFound(id)
			}
			return seckill.ActivityView{Activity: act, Remaining: 37, Status: seckill.StatusActive}, nil
		},
		myOrder: func(activityID, userID int64) (seckill.Order, error) {
			if activityID != 1 {
				return seckill.Order{}, notFound(activityID)
			}
			if userID != 42 {
				return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "no order")
			}
			return seckill.Order{ID: "ord-42", ActivityID: 1, UserID: 42, Status: seckill.OrderStatusCreated, CreatedAt: t0}, nil
		},
		create: func(a seckill.Activity) (seckill.ActivityView, error) {
			a.ID = 7
			return seckill.ActivityView{Activity: a, Remaining: a.TotalStock, Status: seckill.StatusUpcoming}, nil
		},
		preload: func(id int64) (int64, error) {
			if id != 1 {
				return 0, notFound(id)
			}
			return 100, nil
		},
		audit: func(id int64) (seckill.Audit, error) {
			if id != 1 {
				return seckill.Audit{}, notFound(id)
			}
			return seckill.Audit{ActivityID: 1, TotalStock: 100, Orders: 100, RedisRemaining: 0, Consistent: true}, nil
		},
		reconcile: func(id int64) (seckill.Reconciliation, error) {
			if id != 1 {
				return seckill.Reconciliation{}, notFound(id)
			}
			return seckill.Reconciliation{ActivityID: 1, TotalStock: 100, Orders: 60, Before: 39, After: 40, Changed: true}, nil
		},
		ready: func() error { return nil },
	}
}

func (f *fakeService) Buy(_ context.Context, r seckill.BuyRequest) (seckill.Order, error) {
	return f.buy(r)
}
func (f *fakeService) BuyerActivity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	return f.Activity(ctx, id)
}

func (f *fakeService) Activity(_ context.Context, id int64) (seckill.ActivityView, error) {
	return f.activity(id)
}
func (f *fakeService) MyOrder(_ context.Context, a, u int64) (seckill.Order, error) {
	return f.myOrder(a, u)
}
func (f *fakeService) CreateActivity(_ context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	return f.create(a)
}
func (f *fakeService) Preload(_ context.Context, id int64) (int64, error) { return f.preload(id) }
func (f *fakeService) Audit(_ context.Context, id int64) (seckill.Audit, error) {
	return f.audit(id)
}
func (f *fakeService) Reconcile(_ context.Context, id int64) (seckill.Reconciliation, error) {
	return f.reconcile(id)
}
func (f *fakeService) Ready(context.Context) error { return f.ready() }

const adminToken = "s3cret-admin-token"

// request is one HTTP request of a test; header holds name/value pairs, so a
// header can be sent twice.
type request struct {
	method, path, body string
	header             []string
}

func serve(h http.Handler, r request) *httptest.ResponseRecorder {
	req := httptest.NewRequest(r.method, "http://seckill.test"+r.path, strings.NewReader(r.body))
	for i := 0; i+1 < len(r.header); i += 2 {
		req.Header.Add(r.header[i], r.header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkAnswer(req, rec)
	return rec
}

// user and admin are the identity headers of a buyer and of ops.
func user(id string, more ...string) []string { return append([]string{"X-User-ID", id}, more...) }

var admin = []string{"Authorization", "Bearer " + adminToken}

// checkJSON fails unless rec is application/json and decodes it.
func checkJSON(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	return body
}

// checkError fails unless rec is the contract's error for code: the right
// status, {"error":{"code","message"}} and nothing else but order_id with
// already_purchased, and Retry-After exactly on 429 and 503.
func checkError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	body := checkJSON(t, rec)
	wantKeys := []string{"error"}
	if code == seckill.EAlreadyPurchased {
		wantKeys = append(wantKeys, "order_id")
	}
	if got := keys(body); !reflect.DeepEqual(got, keys(setOf(wantKeys...))) {
		t.Errorf("top-level keys = %v, want %v", got, wantKeys)
	}
	e, _ := body["error"].(map[string]any)
	if got := keys(e); !reflect.DeepEqual(got, []string{"code", "message"}) {
		t.Errorf("error keys = %v, want [code message]", got)
	}
	if e["code"] != code {
		t.Errorf("code = %v, want %s", e["code"], code)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Error("message is empty")
	}
	ra := rec.Header().Get("Retry-After")
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		var n int
		if _, err := fmt.Sscanf(ra, "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != ra {
			t.Errorf("Retry-After = %q, want whole seconds >= 1", ra)
		}
	default:
		if ra != "" {
			t.Errorf("Retry-After = %q on a %d", ra, status)
		}
	}
	return body
}

// checkBody fails unless rec has status and exactly the JSON want.
func checkBody(t *testing.T, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	got := checkJSON(t, rec)
	var w map[string]any
	dec := json.NewDecoder(strings.NewReader(want))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, w) {
		gb, _ := json.Marshal(got)
		t.Errorf("body = %s\nwant   %s", gb, want)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func setOf(ks ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range ks {
		m[k] = true
	}
	return m
}

func newTestServer(cfg Config, f *fakeService) http.Handler {
	if cfg.Now == nil {
		// The tests' activities run from 10:00 to 11:00 of their day.
		cfg.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC) }
	}
	return NewServer(cfg, withParts(Deps{Service: f}))
}

const (
	activityJSON = `{"id":1,"name":"Moutai 53%","total_stock":100,"remaining_stock":37,
		"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","status":"active","per_user_limit":1}`
	orderJSON = `{"order_id":"ord-1","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:05:00Z"}`
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

// TestRejections covers every rejection the edge makes itself.
func TestRejections(t *testing.T) {
	buy := func(body string, header ...string) request {
		return request{"POST", "/api/v1/activities/1/orders", body, header}
	}
	create := func(body string) request { return request{"POST", "/admin/v1/activities", body, admin} }
	okCreate := func(field, value string) string {
		m := map[string]string{"name": `"x"`, "total_stock": "1", "starts_at": `"2026-11-22T10:00:00Z"`, "ends_at": `"2026-11-22T11:00:00Z"`}
		m[field] = value
		var parts []string
		for _, k := range []string{"name", "total_stock", "starts_at", "ends_at"} {
			if m[k] != "-" {
				parts = append(parts, fmt.Sprintf("%q:%s", k, m[k]))
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name   string
		cfg    Config
		req    request
		status int
		code   string
	}{
		// activity id
		{"id 0", Config{}, request{"GET", "/api/v1/activities/0", "", nil}, 400, seckill.EInvalid},
		{"id negative", Config{}, request{"GET", "/api/v1/activities/-1", "", nil}, 400, seckill.EInvalid},
		{"id plus", Config{}, request{"GET", "/api/v1/activities/+1", "", nil}, 400, seckill.EInvalid},
		{"id leading zero", Config{}, request{"GET", "/api/v1/activities/01", "", nil}, 400, seckill.EInvalid},
		{"id fraction", Config{}, request{"GET", "/api/v1/activities/1.0", "", nil}, 400, seckill.EInvalid},
		{"id hex", Config{}, request{"GET", "/api/v1/activities/0x1", "", nil}, 400, seckill.EInvalid},
		{"id space", Config{}, request{"GET", "/api/v1/activities/%201", "", nil}, 400, seckill.EInvalid},
		{"id overflow", Config{}, request{"GET", "/api/v1/activities/9223372036854775808", "", nil}, 400, seckill.EInvalid},
		{"id huge", Config{}, request{"GET", "/api/v1/activities/" + strings.Repeat("9", 400), "", nil}, 400, seckill.EInvalid},
		{"id unicode digit", Config{}, request{"GET", "/api/v1/activities/%D9%A1", "", nil}, 400, seckill.EInvalid},
		{"buy, id negative", Config{}, request{"POST", "/api/v1/activities/-5/orders", "", user("42")}, 400, seckill.EInvalid},
		{"mine, id overflow", Config{}, request{"GET", "/api/v1/activities/99999999999999999999/orders/mine", "", user("42")}, 400, seckill.EInvalid},
		{"preload, id zero", Config{AdminToken: adminToken}, request{"POST", "/admin/v1/activities/0/preload", "", admin}, 400, seckill.EInvalid},
		{"audit, id word", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/x/audit", "", admin}, 400, seckill.EInvalid},
		{"reconcile, id negative", Config{AdminToken: adminToken}, request{"POST", "/admin/v1/activities/-1/reconcile", "", admin}, 400, seckill.EInvalid},

		// X-User-ID
		{"user missing", Config{}, buy(""), 401, seckill.EUnauthenticated},
		{"user empty", Config{}, buy("", "X-User-ID", ""), 401, seckill.EUnauthenticated},
		{"user zero", Config{}, buy("", "X-User-ID", "0"), 401, seckill.EUnauthenticated},
		{"user negative", Config{}, buy("", "X-User-ID", "-42"), 401, seckill.EUnauthenticated},
		{"user plus", Config{}, buy("", "X-User-ID", "+42"), 401, seckill.EUnauthenticated},
		{"user leading zero", Config{}, buy("", "X-User-ID", "042"), 401, seckill.EUnauthenticated},
		{"user space", Config{}, buy("", "X-User-ID", "4 2"), 401, seckill.EUnauthenticated},
		{"user fraction", Config{}, buy("", "X-User-ID", "42.0"), 401, seckill.EUnauthenticated},
		{"user overflow", Config{}, buy("", "X-User-ID", "9223372036854775808"), 401, seckill.EUnauthenticated},
		{"user word", Config{}, buy("", "X-User-ID", "alice"), 401, seckill.EUnauthenticated},
		{"user twice", Config{}, buy("", "X-User-ID", "42", "X-User-ID", "43"), 401, seckill.EUnauthenticated},
		{"mine, user missing", Config{}, request{"GET", "/api/v1/activities/1/orders/mine", "", nil}, 401, seckill.EUnauthenticated},
		{"user checked before id", Config{}, request{"POST", "/api/v1/activities/x/orders", "", nil}, 401, seckill.EUnauthenticated},

		// Idempotency-Key
		{"key empty", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", ""), 400, seckill.EInvalid},
		{"key too long", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", strings.Repeat("k", 65)), 400, seckill.EInvalid},
		{"key space", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", "a b"), 400, seckill.EInvalid},
		{"key non-ASCII", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", "clé"), 400, seckill.EInvalid},
		{"key control", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", "a\x7f"), 400, seckill.EInvalid},
		{"key twice", Config{}, buy("", "X-User-ID", "42", "Idempotency-Key", "a", "Idempotency-Key", "b"), 400, seckill.EInvalid},

		// purchase body
		{"quantity 0", Config{}, buy(`{"quantity":0}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity 101", Config{}, buy(`{"quantity":101}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity -1", Config{}, buy(`{"quantity":-1}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity 1.5", Config{}, buy(`{"quantity":1.5}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity 1.0", Config{}, buy(`{"quantity":1.0}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity 1e0", Config{}, buy(`{"quantity":1e0}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity string", Config{}, buy(`{"quantity":"1"}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity null", Config{}, buy(`{"quantity":null}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity true", Config{}, buy(`{"quantity":true}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity huge", Config{}, buy(`{"quantity":100000000000000000000000}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"quantity twice", Config{}, buy(`{"quantity":1,"quantity":1}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"Quantity capitalised", Config{}, buy(`{"Quantity":1}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"unknown field", Config{}, buy(`{"quantity":1,"price":0}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"trailing object", Config{}, buy(`{}{}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"trailing garbage", Config{}, buy(`{"quantity":1} x`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"trailing comma", Config{}, buy(`{"quantity":1,}`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"truncated", Config{}, buy(`{"quantity":`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"array", Config{}, buy(`[]`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"null body", Config{}, buy(`null`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"number body", Config{}, buy(`1`, "X-User-ID", "42"), 400, seckill.EInvalid},
		{"not UTF-8", Config{}, buy("{\"quantity\":1,\"\xff\":1}", "X-User-ID", "42"), 400, seckill.EInvalid},
		{"not UTF-8 in known string", Config{AdminToken: adminToken}, create(okCreate("name", "\"\xc3\x28\"")), 400, seckill.EInvalid},
		{"body too large", Config{}, buy(strings.Repeat(" ", MaxBodyBytes+1), "X-User-ID", "42"), 413, seckill.ETooLarge},

		// admin identity
		{"admin disabled", Config{}, create(okCreate("name", `"x"`)), 403, seckill.EAdminDisabled},
		{"admin disabled, preload", Config{}, request{"POST", "/admin/v1/activities/1/preload", "", nil}, 403, seckill.EAdminDisabled},
		{"admin disabled, audit", Config{}, request{"GET", "/admin/v1/activities/1/audit", "", admin}, 403, seckill.EAdminDisabled},
		{"admin disabled, reconcile", Config{}, request{"POST", "/admin/v1/activities/1/reconcile", "", admin}, 403, seckill.EAdminDisabled},
		{"admin no header", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", nil}, 401, seckill.EUnauthenticated},
		{"admin wrong token", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer nope"}}, 401, seckill.EUnauthenticated},
		{"admin token prefix", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer " + adminToken[:5]}}, 401, seckill.EUnauthenticated},
		{"admin token longer", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer " + adminToken + "x"}}, 401, seckill.EUnauthenticated},
		{"admin basic scheme", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Basic " + adminToken}}, 401, seckill.EUnauthenticated},
		{"admin bare token", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", adminToken}}, 401, seckill.EUnauthenticated},
		{"admin empty bearer", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer "}}, 401, seckill.EUnauthenticated},
		{"admin two headers", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/1/audit", "", append(admin, "Authorization", "Bearer nope")}, 401, seckill.EUnauthenticated},
		{"admin checked before id", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/activities/x/audit", "", nil}, 401, seckill.EUnauthenticated},
		{"buyer header is no admin", Config{AdminToken: adminToken}, request{"POST", "/admin/v1/activities/1/preload", "", user("42")}, 401, seckill.EUnauthenticated},

		// create body
		{"create, empty body", Config{AdminToken: adminToken}, create(""), 400, seckill.EInvalid},
		{"create, {}", Config{AdminToken: adminToken}, create("{}"), 400, seckill.EInvalid},
		{"create, name missing", Config{AdminToken: adminToken}, create(okCreate("name", "-")), 400, seckill.EInvalid},
		{"create, stock missing", Config{AdminToken: adminToken}, create(okCreate("total_stock", "-")), 400, seckill.EInvalid},
		{"create, starts missing", Config{AdminToken: adminToken}, create(okCreate("starts_at", "-")), 400, seckill.EInvalid},
		{"create, ends missing", Config{AdminToken: adminToken}, create(okCreate("ends_at", "-")), 400, seckill.EInvalid},
		{"create, name empty", Config{AdminToken: adminToken}, create(okCreate("name", `""`)), 400, seckill.EInvalid},
		{"create, name blank", Config{AdminToken: adminToken}, create(okCreate("name", `"   "`)), 400, seckill.EInvalid},
		{"create, name null", Config{AdminToken: adminToken}, create(okCreate("name", `null`)), 400, seckill.EInvalid},
		{"create, name number", Config{AdminToken: adminToken}, create(okCreate("name", `1`)), 400, seckill.EInvalid},
		{"create, name 129 runes", Config{AdminToken: adminToken}, create(okCreate("name", `"`+strings.Repeat("茅", 129)+`"`)), 400, seckill.EInvalid},
		{"create, name control", Config{AdminToken: adminToken}, create(okCreate("name", `"a\u0000b"`)), 400, seckill.EInvalid},
		{"create, stock 0", Config{AdminToken: adminToken}, create(okCreate("total_stock", `0`)), 400, seckill.EInvalid},
		{"create, stock negative", Config{AdminToken: adminToken}, create(okCreate("total_stock", `-1`)), 400, seckill.EInvalid},
		{"create, stock too big", Config{AdminToken: adminToken}, create(okCreate("total_stock", `10000001`)), 400, seckill.EInvalid},
		{"create, stock fraction", Config{AdminToken: adminToken}, create(okCreate("total_stock", `1.5`)), 400, seckill.EInvalid},
		{"create, stock string", Config{AdminToken: adminToken}, create(okCreate("total_stock", `"100"`)), 400, seckill.EInvalid},
		{"create, stock null", Config{AdminToken: adminToken}, create(okCreate("total_stock", `null`)), 400, seckill.EInvalid},
		{"create, stock overflow", Config{AdminToken: adminToken}, create(okCreate("total_stock", `1e400`)), 400, seckill.EInvalid},
		{"create, starts not RFC 3339", Config{AdminToken: adminToken}, create(okCreate("starts_at", `"2026-11-22 10:00:00"`)), 400, seckill.EInvalid},
		{"create, starts no zone", Config{AdminToken: adminToken}, create(okCreate("starts_at", `"2026-11-22T10:00:00"`)), 400, seckill.EInvalid},
		{"create, starts number", Config{AdminToken: adminToken}, create(okCreate("starts_at", `1700000000`)), 400, seckill.EInvalid},
		{"create, ends null", Config{AdminToken: adminToken}, create(okCreate("ends_at", `null`)), 400, seckill.EInvalid},
		{"create, ends before starts", Config{AdminToken: adminToken}, create(okCreate("ends_at", `"2026-11-22T09:00:00Z"`)), 400, seckill.EInvalid},
		{"create, ends equals starts", Config{AdminToken: adminToken}, create(okCreate("ends_at", `"2026-11-22T18:00:00+08:00"`)), 400, seckill.EInvalid},
		{"create, unknown field", Config{AdminToken: adminToken}, create(`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price":1}`), 400, seckill.EInvalid},
		{"create, trailing", Config{AdminToken: adminToken}, create(okCreate("name", `"x"`) + "[]"), 400, seckill.EInvalid},
		{"create, too large", Config{AdminToken: adminToken}, create(`{"name":"` + strings.Repeat("x", MaxBodyBytes) + `"}`), 413, seckill.ETooLarge},

		// routing
		{"unknown route", Config{}, request{"GET", "/nope", "", nil}, 404, codeNotFound},
		{"trailing slash", Config{}, request{"GET", "/api/v1/activities/1/", "", nil}, 404, codeNotFound},
		{"unknown admin route", Config{AdminToken: adminToken}, request{"GET", "/admin/v1/nope", "", admin}, 404, codeNotFound},
		{"wrong method", Config{}, request{"DELETE", "/api/v1/activities/1", "", nil}, 405, codeMethodNotAllowed},
		{"GET on orders", Config{}, request{"GET", "/api/v1/activities/1/orders", "", user("42")}, 405, codeMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.create = func(a seckill.Activity) (seckill.ActivityView, error) {
				t.Errorf("CreateActivity reached with %+v", a)
				return seckill.ActivityView{}, errors.New("unreachable")
			}
			f.buy = func(r seckill.BuyRequest) (seckill.Order, error) {
				t.Errorf("Buy reached with %+v", r)
				return seckill.Order{}, errors.New("unreachable")
			}
			checkError(t, serve(newTestServer(tt.cfg, f), tt.req), tt.status, tt.code)
		})
	}
}

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

func TestAdminUnauthenticatedAsksForBearer(t *testing.T) {
	rec := serve(newTestServer(Config{AdminToken: adminToken}, newFake()), request{"GET", "/admin/v1/activities/1/audit", "", nil})
	if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
	}
}

func TestMethodNotAllowedListsAllow(t *testing.T) {
	rec := serve(newTestServer(Config{}, newFake()), request{"PUT", "/api/v1/activities/1/orders", "", nil})
	checkError(t, rec, 405, codeMethodNotAllowed)
	if got := rec.Header().Get("Allow"); got != "POST" {
		t.Errorf("Allow = %q, want POST", got)
	}
}

// TestBodyLimitWithoutContentLength covers a chunked body, whose size only
// shows while it is read.
func TestBodyLimitWithoutContentLength(t *testing.T) {
	h := newTestServer(Config{AdminToken: adminToken}, newFake())
	for _, path := range []string{"/api/v1/activities/1/orders", "/admin/v1/activities"} {
		req := httptest.NewRequest("POST", path, io.MultiReader(strings.NewReader("{"), strings.NewReader(strings.Repeat(" ", MaxBodyBytes))))
		req.ContentLength = -1
		req.Header.Set("X-User-ID", "42")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkError(t, rec, 413, seckill.ETooLarge)
	}
}

// TestBodyLimitFromContentLength covers a body announced too large: it is
// refused before a byte is read, and the connection is closed.
func TestBodyLimitFromContentLength(t *testing.T) {
	req := httptest.NewRequest("POST", "/api/v1/activities/1/orders", strings.NewReader("{}"))
	req.ContentLength = MaxBodyBytes + 1
	req.Header.Set("X-User-ID", "42")
	rec := httptest.NewRecorder()
	newTestServer(Config{}, newFake()).ServeHTTP(rec, req)
	checkError(t, rec, 413, seckill.ETooLarge)
	if rec.Header().Get("Connection") != "close" {
		t.Errorf("Connection = %q, want close", rec.Header().Get("Connection"))
	}
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

func TestRequestID(t *testing.T) {
	h := newTestServer(Config{}, newFake())
	rec := serve(h, request{"GET", "/healthz", "", []string{"X-Request-ID", "req-abc_123"}})
	if got := rec.Header().Get("X-Request-ID"); got != "req-abc_123" {
		t.Errorf("sane id not echoed: %q", got)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 65), "caf\u00e9", `a"b`, "a,b", "a;b", "a/b"} {
		rec := serve(h, request{"GET", "/nope", "", []string{"X-Request-ID", bad}})
		got := rec.Header().Get("X-Request-ID")
		if got == bad || !wellFormedRequestID(got) {
			t.Errorf("incoming %q: answered id %q, want a fresh one", bad, got)
		}
	}
}

func TestRateLimits(t *testing.T) {
	buyAs := func(h http.Handler, id string) *httptest.ResponseRecorder {
		return serve(h, request{"POST", "/api/v1/activities/1/orders", "", user(id)})
	}
	t.Run("per user", func(t *testing.T) {
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 2}, newFake())
		for i := range 2 {
			if rec := buyAs(h, "42"); rec.Code != 201 {
				t.Fatalf("attempt %d within burst: %d", i, rec.Code)
			}
		}
		rec := buyAs(h, "42")
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "100" {
			t.Errorf("Retry-After = %q, want 100 (one token at 0.01/s)", got)
		}
		if rec := buyAs(h, "43"); rec.Code != 201 {
			t.Errorf("another user limited too: %d", rec.Code)
		}
	})
	t.Run("global", func(t *testing.T) {
		h := newTestServer(Config{GlobalRate: 0.5, GlobalBurst: 1}, newFake())
		if rec := buyAs(h, "1"); rec.Code != 201 {
			t.Fatalf("first: %d", rec.Code)
		}
		rec := buyAs(h, "2")
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After = %q, want 2", got)
		}
	})
	// docs/API.md's precedence: the rate limit answers before the purchase
	// is looked at, so a holder past it gets 429, not already_purchased.
	t.Run("before already_purchased", func(t *testing.T) {
		f := newFake()
		f.buy = func(seckill.BuyRequest) (seckill.Order, error) {
			return seckill.Order{}, &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "you have one", OrderID: "ord-9"}
		}
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 1}, f)
		checkError(t, buyAs(h, "42"), 409, seckill.EAlreadyPurchased)
		checkError(t, buyAs(h, "42"), 429, seckill.EBusy)
	})
	t.Run("off by default", func(t *testing.T) {
		h := newTestServer(Config{}, newFake())
		for range 50 {
			if rec := buyAs(h, "42"); rec.Code != 201 {
				t.Fatalf("limited without a limit: %d", rec.Code)
			}
		}
	})
	// The per-user read limit, when set, covers every other buyer route,
	// with a bucket of its own beside the purchase's, so a result page
	// polled never spends the purchase's attempts; off, reads are never 429.
	t.Run("per user on every buyer route", func(t *testing.T) {
		off := newTestServer(Config{UserRate: 0.01, UserBurst: 2}, newFake())
		for i := range 5 {
			if rec := serve(off, request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}); rec.Code != 200 {
				t.Fatalf("mine %d without a read limit: %d", i, rec.Code)
			}
		}
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 2, ReadRate: 0.01, ReadBurst: 2}, newFake())
		const mine = "/api/v1/activities/1/orders/mine"
		for i := range 2 {
			if rec := serve(h, request{"GET", mine, "", user("42")}); rec.Code != 200 {
				t.Fatalf("mine %d within burst: %d", i, rec.Code)
			}
		}
		rec := serve(h, request{"GET", mine, "", user("42")})
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "100" {
			t.Errorf("Retry-After = %q, want 100", got)
		}
		// The activity read counts when it names the user.
		checkError(t, serve(h, request{"GET", "/api/v1/activities/1", "", user("42")}), 429, seckill.EBusy)
		// Without an X-User-ID, or with one that is not an id, it is not
		// limited per user (nor refused: the read needs no identity).
		for _, hdr := range [][]string{nil, user("x"), user("042")} {
			for range 3 {
				if rec := serve(h, request{"GET", "/api/v1/activities/1", "", hdr}); rec.Code != 200 {
					t.Fatalf("activity read with %v: %d", hdr, rec.Code)
				}
			}
		}
		// The purchase keeps its own bucket, and other users theirs.
		if rec := buyAs(h, "42"); rec.Code != 201 {
			t.Errorf("purchase after mine's bucket ran out: %d", rec.Code)
		}
		if rec := serve(h, request{"GET", mine, "", user("43")}); rec.Code == 429 {
			t.Errorf("another user's mine: %d", rec.Code)
		}
		// A signed deployment counts only verified identities on the read.
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		signed := newTestServer(Config{UserRate: 0.01, UserBurst: 1, ReadRate: 0.01, ReadBurst: 1, IdentitySecret: []byte(identitySecret), Now: func() time.Time { return now }}, newFake())
		for range 3 {
			if rec := serve(signed, request{"GET", "/api/v1/activities/1", "", user("42")}); rec.Code != 200 {
				t.Fatalf("unsigned X-User-ID spent user 42's bucket: %d", rec.Code)
			}
		}
		if rec := serve(signed, request{"GET", "/api/v1/activities/1", "", signedUser("42", now)}); rec.Code != 200 {
			t.Fatalf("signed read: %d", rec.Code)
		}
		checkError(t, serve(signed, request{"GET", "/api/v1/activities/1", "", signedUser("42", now)}), 429, seckill.EBusy)
	})
	t.Run("global on every public route but the probes", func(t *testing.T) {
		f := newFake()
		h := newTestServer(Config{GlobalRate: 0.5, GlobalBurst: 1, OpenAPI: []byte("openapi: 3.1.0\n")}, f)
		if rec := serve(h, request{"GET", "/api/v1/activities/1", "", nil}); rec.Code != 200 {
			t.Fatalf("first: %d", rec.Code)
		}
		for _, r := range []request{
			{"GET", "/api/v1/activities/1", "", nil},
			{"GET", "/api/v1/activities/1", "", user("7")},
			{"POST", "/api/v1/activities/1/orders", "", user("8")},
			{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
			{"GET", "/openapi.yaml", "", nil},
		} {
			rec := serve(h, r)
			checkError(t, rec, 429, seckill.EBusy)
			if got := rec.Header().Get("Retry-After"); got != "2" {
				t.Errorf("%s %s: Retry-After = %q, want 2", r.method, r.path, got)
			}
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			if rec := serve(h, request{"GET", path, "", nil}); rec.Code != 200 {
				t.Errorf("%s limited: %d", path, rec.Code)
			}
		}
	})
	t.Run("global off by default on every route", func(t *testing.T) {
		h := newTestServer(Config{}, newFake())
		for range 50 {
			for _, r := range []request{
				{"GET", "/api/v1/activities/1", "", user("42")},
				{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
			} {
				if rec := serve(h, r); rec.Code != 200 {
					t.Fatalf("%s limited without a limit: %d", r.path, rec.Code)
				}
			}
		}
	})
}

func TestUserBucketsForgetLeastRecentlyUsed(t *testing.T) {
	u := newUserBuckets(1, 1, 3)
	for id := int64(1); id <= 3; id++ {
		u.get(id).Allow() // drain
	}
	u.get(1) // 1 is now the most recent; 2 the least
	u.get(4) // evicts 2
	if n := u.byKey.Len(); n != 3 {
		t.Fatalf("kept %d buckets, want 3", n)
	}
	if u.byKey.Contains(2) {
		t.Error("least recently used user 2 was kept")
	}
	if u.get(1).Allow() {
		t.Error("user 1's drained bucket was replaced by a fresh one")
	}
}

// Beyond keepFull, the least recently used buckets are forgotten once full
// (a fresh bucket is the same), never while refilling.
func TestUserBucketsForgetFullOnes(t *testing.T) {
	u := newUserBuckets(0.001, 1, 100)
	u.keepFull = 2
	u.get(1)         // full
	u.get(2).Allow() // drained for 1000 s
	u.get(3)         // two kept however full: nothing forgotten
	if n := u.byKey.Len(); n != 3 {
		t.Fatalf("kept %d buckets, want 3", n)
	}
	u.get(4) // forgets full 1, stops at the keepFull limit
	if u.byKey.Contains(1) || !u.byKey.Contains(2) || u.byKey.Len() != 3 {
		t.Fatalf("kept %v, want [2 3 4]", u.byKey.Keys())
	}
	u.get(5) // the least recently used, 2, is refilling: kept
	if !u.byKey.Contains(2) {
		t.Fatal("user 2's refilling bucket was forgotten")
	}
	if u.get(2).Allow() {
		t.Error("user 2's drained bucket was replaced by a fresh one")
	}
	if b := newKeyedBuckets[string](1, 1, 100); b.keepFull != 0 {
		t.Error("per-address buckets forget full ones: only per-user ones may")
	}
}

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake(), Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42", "X-Request-ID", "rid-1")})
	serve(h, request{"GET", "/admin/v1/activities/1/audit", "", admin})
	serve(h, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer wrong-token-value"}})

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), logs.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if _, ok := first["duration_ms"].(float64); !ok {
		t.Errorf("log has no numeric duration_ms: %s", lines[0])
	}
	for k, want := range map[string]any{"request_id": "rid-1", "method": "POST", "route": "/api/v1/activities/:id/orders", "status": float64(201), "user_id": float64(42)} {
		if first[k] != want {
			t.Errorf("log %s = %v, want %v", k, first[k], want)
		}
	}
	if !strings.Contains(lines[2], `"code":"unauthenticated"`) {
		t.Errorf("rejection without its code: %s", lines[2])
	}
	for _, secret := range []string{adminToken, "wrong-token-value", "Bearer"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log holds %q:\n%s", secret, logs.String())
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFake()
	h := NewServer(Config{}, withParts(Deps{Service: f, Registry: reg, Gatherer: reg}))
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")})
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", nil})
	f.buy = func(seckill.BuyRequest) (seckill.Order, error) {
		return seckill.Order{}, seckill.Errorf(seckill.ESoldOut, "gone")
	}
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")})
	serve(h, request{"FROB", "/x" + strings.Repeat("y", 100), "", nil})

	rec := serve(h, request{"GET", "/metrics", "", nil})
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	for _, want := range []string{
		`seckill_purchases_total{outcome="created"} 1`,
		`seckill_purchases_total{outcome="sold_out"} 1`,
		`seckill_purchases_total{outcome="unauthenticated"} 1`,
		`seckill_http_requests_total{method="POST",route="/api/v1/activities/:id/orders",status="201"} 1`,
		`seckill_http_requests_total{method="other",route="unmatched",status="404"} 1`,
		`seckill_http_request_duration_seconds_bucket{route="/api/v1/activities/:id/orders",le="0.001"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A second server on the same registry shares the counters instead of failing.
	h2 := NewServer(Config{}, withParts(Deps{Service: newFake(), Registry: reg, Gatherer: reg}))
	serve(h2, request{"POST", "/api/v1/activities/1/orders", "", user("7")})
	if !strings.Contains(serve(h, request{"GET", "/metrics", "", nil}).Body.String(), `seckill_purchases_total{outcome="created"} 2`) {
		t.Error("second server's purchase not counted in the shared counter")
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

// TestAdminSurfaceCannotBeMapped: without the token, every path under
// /admin/ answers alike, routed or not, whatever the method, so probing
// cannot tell which endpoints exist; with the token, 404 and 405 as usual.
func TestAdminSurfaceCannotBeMapped(t *testing.T) {
	probes := []request{
		{"GET", "/admin/v1/activities/1/audit", "", nil},                         // a real endpoint
		{"DELETE", "/admin/v1/activities/1/audit", "", nil},                      // wrong method
		{"GET", "/admin/v1/activities", "", nil},                                 // wrong method of a real path
		{"GET", "/admin/v1/users", "", nil},                                      // no such endpoint
		{"POST", "/admin/v2/activities", "{}", nil},                              // no such version
		{"GET", "/admin/", "", nil},                                              // the root
		{"GET", "/admin", "", nil},                                               // the root without its slash
		{"GET", "/admin/v1/activities/1/audit/", "", nil},                        // trailing slash
		{"OPTIONS", "/admin/v1/activities", "", nil},                             // preflight-like
		{"GET", "/admin/v1/users", "", []string{"Authorization", "Bearer nope"}}, // wrong token
	}
	h := newTestServer(Config{AdminToken: adminToken}, newFake())
	for _, p := range probes {
		rec := serve(h, p)
		checkError(t, rec, 401, seckill.EUnauthenticated)
		if rec.Header().Get("Allow") != "" {
			t.Errorf("%s %s: Allow = %q leaks the routes", p.method, p.path, rec.Header().Get("Allow"))
		}
	}
	disabled := newTestServer(Config{}, newFake())
	for _, p := range probes {
		checkError(t, serve(disabled, p), 403, seckill.EAdminDisabled)
	}
	// With the token, the ordinary answers (from a server of its own: the
	// ten probes above are the address's ten failures, which limit it).
	h = newTestServer(Config{AdminToken: adminToken}, newFake())
	checkError(t, serve(h, request{"GET", "/admin/v1/users", "", admin}), 404, codeNotFound)
	checkError(t, serve(h, request{"DELETE", "/admin/v1/activities/1/audit", "", admin}), 405, codeMethodNotAllowed)
	// Paths that only look like the prefix are not admin paths.
	checkError(t, serve(h, request{"GET", "/administrator", "", nil}), 404, codeNotFound)
}

func TestBuyerUnauthenticatedHasAChallenge(t *testing.T) {
	rec := serve(newTestServer(Config{}, newFake()), request{"POST", "/api/v1/activities/1/orders", "", nil})
	checkError(t, rec, http.StatusUnauthorized, seckill.EUnauthenticated)
	if got := rec.Header().Get("WWW-Authenticate"); got != buyerChallenge {
		t.Errorf("WWW-Authenticate = %q, want %q", got, buyerChallenge)
	}
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

// withParts fills the optional parts of d the way cmd/seckill wires them:
// from whatever the service and the payments also implement.
func withParts(d Deps) Deps {
	d.Tasks, _ = d.Service.(AdminTasks)
	d.Pricer, _ = d.Service.(Pricer)
	d.Rooms, _ = d.Service.(RoomAdmin)
	d.Canceller, _ = d.Payments.(Canceller)
	return d
}
