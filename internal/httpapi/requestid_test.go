package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// The ids the service makes are well formed (so a client may send one
// back) and never repeat. Can fail: a counter not advanced, or a prefix or
// separator outside [A-Za-z0-9._-].
func TestGeneratedRequestIDsAreWellFormedAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		if !wellFormedRequestID(id) || seen[id] {
			t.Fatalf("generated id %q: well formed %v, seen before %v", id, wellFormedRequestID(id), seen[id])
		}
		seen[id] = true
	}
}

// The header values every answer shares are never written through: an
// answer that adds to one gets a slice of its own. Can fail: a shared
// value given spare capacity, so that Add appends into it.
func TestSharedHeaderValuesStayUnchanged(t *testing.T) {
	for _, shared := range [][]string{headerNoSniff, headerNoStore, headerVary, headerJSON} {
		want := shared[0]
		h := http.Header{"K": shared}
		h.Add("K", "more")
		if shared[0] != want || len(shared) != 1 || cap(shared) != 1 {
			t.Errorf("shared header %q changed by an Add: %q (cap %d)", want, shared, cap(shared))
		}
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
