package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// With an admin listener, the ops API, /metrics and pprof are served there
// and nowhere on the public listener.
func TestAdminListenerSplit(t *testing.T) {
	pub, ops := NewServers(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))

	for _, r := range []request{
		{"GET", "/metrics", "", nil},
		{"GET", "/debug/pprof/", "", nil},
		{"GET", "/debug/pprof/heap", "", nil},
		{"GET", "/admin/v1/activities/1/audit", "", admin},
		{"POST", "/admin/v1/activities/1/preload", "", admin},
		{"POST", "/admin/v1/activities", `{}`, admin},
	} {
		rec := serve(pub, r)
		checkError(t, rec, http.StatusNotFound, codeNotFound)
	}
	// The buyer API stays public.
	if rec := serve(pub, request{"GET", "/api/v1/activities/1", "", nil}); rec.Code != http.StatusOK {
		t.Errorf("public GET activity = %d", rec.Code)
	}

	if rec := serve(ops, request{"GET", "/metrics", "", nil}); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "seckill_http_requests_total") {
		t.Errorf("ops /metrics = %d %.200s", rec.Code, rec.Body)
	}
	if rec := serve(ops, request{"GET", "/debug/pprof/goroutine?debug=1", "", admin}); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("ops pprof goroutine = %d %.200s", rec.Code, rec.Body)
	}
	if rec := serve(ops, request{"GET", "/debug/pprof/", "", admin}); rec.Code != http.StatusOK {
		t.Errorf("ops pprof index = %d", rec.Code)
	}
	// The ops API keeps its token on its own listener.
	checkError(t, serve(ops, request{"GET", "/admin/v1/activities/1/audit", "", nil}), http.StatusUnauthorized, "unauthenticated")
	if rec := serve(ops, request{"GET", "/admin/v1/activities/1/audit", "", admin}); rec.Code != http.StatusOK {
		t.Errorf("ops audit with token = %d %s", rec.Code, rec.Body)
	}
	// The buyer API is not on the ops listener.
	checkError(t, serve(ops, request{"POST", "/api/v1/activities/1/orders", "", user("1")}), http.StatusNotFound, codeNotFound)

	// Both listeners' routes are in the document.
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []http.Handler{pub, ops} {
		for _, r := range engineOf(h).Routes() {
			path := ginParam.ReplaceAllString(r.Path, "{$1}")
			if !v.HasOperation(r.Method, path) {
				t.Errorf("route %s %s is not in docs/openapi.yaml", r.Method, r.Path)
			}
		}
	}
}

// On one listener there is no pprof at all.
func TestNoPprofOnOneListener(t *testing.T) {
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))
	checkError(t, serve(h, request{"GET", "/debug/pprof/heap", "", nil}), http.StatusNotFound, codeNotFound)
}

// With an admin listener, an ops path asked of the public one says where it
// is served, with the same 404 not_found; on one listener, and for
// other paths, the answer is as before.
func TestOpsPathOnPublicListenerSaysWhere(t *testing.T) {
	pub, _ := NewServers(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))
	for _, path := range []string{"/admin/v1/activities/1/audit", "/admin", "/metrics", "/debug/pprof/heap"} {
		rec := serve(pub, request{"GET", path, "", admin})
		body := rec.Body.String()
		checkError(t, rec, http.StatusNotFound, codeNotFound)
		if !strings.Contains(body, "served on the admin address (SECKILL_ADMIN_ADDR)") {
			t.Errorf("GET %s on the public listener: %s", path, body)
		}
	}
	rec := serve(pub, request{"GET", "/api/v2/nothing", "", nil})
	body := rec.Body.String()
	checkError(t, rec, http.StatusNotFound, codeNotFound)
	if strings.Contains(body, "admin address") {
		t.Errorf("an unknown buyer path points at the admin address: %s", body)
	}
	one := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))
	rec = serve(one, request{"GET", "/admin/v1/users", "", admin})
	body = rec.Body.String()
	checkError(t, rec, http.StatusNotFound, codeNotFound)
	if strings.Contains(body, "admin address") {
		t.Errorf("on one listener an unknown admin path points at the admin address: %s", body)
	}
}

// pprof on the admin listener needs the admin token, checked as the ops
// API's; /metrics and the probes stay open for Prometheus and the
// orchestrator. Without a token configured pprof is disabled, never open.
func TestPprofNeedsAdminToken(t *testing.T) {
	_, ops := NewServers(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))
	for i, path := range []string{"/debug/pprof/", "/debug/pprof", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/nope"} {
		// Each path from an address of its own, which its three failures
		// leave below the admin failure limit.
		addr := "192.0.2." + strconv.Itoa(10+i)
		for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "Basic " + adminToken}} {
			rec := serveFrom(ops, addr, request{"GET", path, "", hdr})
			checkError(t, rec, http.StatusUnauthorized, "unauthenticated")
			if rec.Header().Get("WWW-Authenticate") != `Bearer realm="seckill-admin"` {
				t.Errorf("GET %s %v: WWW-Authenticate %q", path, hdr, rec.Header().Get("WWW-Authenticate"))
			}
		}
	}
	checkError(t, serve(ops, request{"POST", "/debug/pprof/symbol", "", nil}), http.StatusUnauthorized, "unauthenticated")
	if rec := serve(ops, request{"GET", "/debug/pprof/cmdline", "", admin}); rec.Code != http.StatusOK {
		t.Errorf("pprof cmdline with the token = %d", rec.Code)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if rec := serve(ops, request{"GET", path, "", nil}); rec.Code != http.StatusOK {
			t.Errorf("GET %s without a token = %d, want 200 (open for scrapers and probes)", path, rec.Code)
		}
	}

	_, off := NewServers(Config{}, withParts(Deps{Service: newFake()}))
	checkError(t, serve(off, request{"GET", "/debug/pprof/heap", "", nil}), http.StatusForbidden, "admin_disabled")
}
