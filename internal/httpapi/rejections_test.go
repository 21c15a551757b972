package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
)

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
