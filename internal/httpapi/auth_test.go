package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
)

func TestAdminUnauthenticatedAsksForBearer(t *testing.T) {
	rec := serve(newTestServer(Config{AdminToken: adminToken}, newFake()), request{"GET", "/admin/v1/activities/1/audit", "", nil})
	if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
	}
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
