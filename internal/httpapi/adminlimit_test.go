package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// adminFrom sends an admin request from a client address (IPv4, or IPv6
// without brackets) with the header pairs hdr, and fails the test when the
// answer was delayed.
func adminFrom(t *testing.T, h http.Handler, addr string, hdr []string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", "http://seckill.test/admin/v1/activities/1/audit", nil)
	req.RemoteAddr = addr + ":40000"
	if strings.Contains(addr, ":") {
		req.RemoteAddr = "[" + addr + "]:40000"
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(rec, req)
	// The back-off this limit replaced waited 1 to 2 s; a limit answers at once.
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("an admin answer from %s took %v: no answer may be delayed", addr, d)
	}
	checkAnswer(req, rec)
	return rec
}

// serveFrom is serve from the client address addr (IPv4).
func serveFrom(h http.Handler, addr string, r request) *httptest.ResponseRecorder {
	req := r.httpRequest()
	req.RemoteAddr = addr + ":40000"
	return serveRequest(h, req)
}

// TestAdminFailuresLimited: after 10 failed admin authentications from one
// address within a minute, its admin requests are answered 429
// too_many_requests with Retry-After, even with the right token, until a
// minute after its last failure; other addresses (an IPv6 one by its /64)
// are unaffected; no answer waits.
// Can fail: the old back-off (the 11th answered 401 after a wait, the right
// token let through), a limit per connection address instead of per /64,
// or one that never lifts.
func TestAdminFailuresLimited(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	h := NewServer(Config{AdminToken: adminToken, Now: func() time.Time { return now }}, withParts(Deps{Service: newFake()}))
	wrong := []string{"Authorization", "Bearer not-the-token"}
	const guesser, other = "203.0.113.7", "198.51.100.2"
	for i := range 10 {
		hdr := wrong
		if i%2 == 1 {
			hdr = nil // a missing token fails as well
		}
		checkError(t, adminFrom(t, h, guesser, hdr), http.StatusUnauthorized, seckill.EUnauthenticated)
		now = now.Add(time.Second)
	}
	// The 11th, and then every admin request, is refused, the right token too.
	for _, hdr := range [][]string{wrong, admin} {
		rec := adminFrom(t, h, guesser, hdr)
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("after 10 failures in 10 s, a request with %v = %d %s, want 429", hdr, rec.Code, rec.Body)
		}
		checkError(t, rec, http.StatusTooManyRequests, "too_many_requests")
	}
	if rec := adminFrom(t, h, other, admin); rec.Code != http.StatusOK {
		t.Errorf("another address with the right token = %d %s, want 200", rec.Code, rec.Body)
	}
	// The wrong token at 10 s was its last failure: limited until 70 s.
	now = now.Add(59 * time.Second)
	rec := adminFrom(t, h, guesser, admin)
	if ra := rec.Header().Get("Retry-After"); rec.Code != http.StatusTooManyRequests || ra != "1" {
		t.Errorf("59 s after the last failure: %d with Retry-After %q, want 429 with 1", rec.Code, ra)
	}
	now = now.Add(time.Second)
	if rec := adminFrom(t, h, guesser, admin); rec.Code != http.StatusOK {
		t.Errorf("a minute after the last failure, the right token = %d %s, want 200", rec.Code, rec.Body)
	}
}

// TestAdminFailuresKeepGuessing: a wrong token sent while limited is a
// failure too, so a guesser stays limited until it stops for a minute;
// failures spread over more than a minute never limit; an IPv6 address is
// limited by its /64.
// Can fail: a limit whose end does not move with the guesses, or a count
// that never forgets.
func TestAdminFailuresKeepGuessing(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	h := NewServer(Config{AdminToken: adminToken, Now: func() time.Time { return now }}, withParts(Deps{Service: newFake()}))
	wrong := []string{"Authorization", "Bearer not-the-token"}
	// A flood at one instant: ten 401s, then 429s, none of them waiting.
	for i := range 12 {
		want := http.StatusUnauthorized
		if i >= 10 {
			want = http.StatusTooManyRequests
		}
		if rec := adminFrom(t, h, "192.0.2.50", wrong); rec.Code != want {
			t.Errorf("failure %d of a flood = %d, want %d", i+1, rec.Code, want)
		}
	}
	// Ten failures 7 s apart span 63 s: no limit.
	for range 10 {
		checkError(t, adminFrom(t, h, "192.0.2.9", wrong), http.StatusUnauthorized, seckill.EUnauthenticated)
		now = now.Add(7 * time.Second)
	}
	if rec := adminFrom(t, h, "192.0.2.9", admin); rec.Code != http.StatusOK {
		t.Errorf("10 failures over 63 s limited the address: %d", rec.Code)
	}
	// Two hosts of one /64 share a count; the next /64 does not.
	for i := range 10 {
		adminFrom(t, h, "2001:db8:1:2::"+strconv.Itoa(i+1), wrong)
	}
	for _, addr := range []string{"2001:db8:1:2::ff", "2001:db8:1:2:abcd::1"} {
		if rec := adminFrom(t, h, addr, admin); rec.Code != http.StatusTooManyRequests {
			t.Errorf("%s after 10 failures of its /64 = %d, want 429", addr, rec.Code)
		}
	}
	if rec := adminFrom(t, h, "2001:db8:1:3::1", admin); rec.Code != http.StatusOK {
		t.Errorf("the next /64 = %d, want 200", rec.Code)
	}
	// Guessing on while limited: each guess moves the end.
	for range 3 {
		now = now.Add(50 * time.Second)
		if rec := adminFrom(t, h, "2001:db8:1:2::1", wrong); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("a guess 50 s after the last = %d, want 429", rec.Code)
		}
	}
	now = now.Add(AdminFailureWindow)
	if rec := adminFrom(t, h, "2001:db8:1:2::1", admin); rec.Code != http.StatusOK {
		t.Errorf("a minute after the last guess = %d, want 200", rec.Code)
	}
}

// TestAdminFailuresBounded: the limit remembers at most
// AdminFailureAddresses addresses, in about 2 MB.
// Can fail: an unbounded map of addresses.
func TestAdminFailuresBounded(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := newAdminFailures(func() time.Time { return now }, slog.New(slog.DiscardHandler))
	for i := range AdminFailureAddresses + 100 {
		addr := "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
		for range AdminFailureLimit {
			f.check(addr, false)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := f.addrs.Len(); n != AdminFailureAddresses {
		t.Errorf("remembered %d addresses, want %d", n, AdminFailureAddresses)
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d limited addresses: %d bytes, %d each", f.addrs.Len(), grown, grown/int64(f.addrs.Len()))
	if grown > 3<<20 {
		t.Errorf("%d addresses took %d bytes, over 3 MiB", f.addrs.Len(), grown)
	}
	runtime.KeepAlive(f)
}

// TestAdminUnauthenticatedMessages: a missing or malformed Authorization
// header is told the Bearer form; a well-formed wrong token is told it is
// wrong, not sent to the form it used. Both are 401 unauthenticated.
// Can fail: one message for both.
func TestAdminUnauthenticatedMessages(t *testing.T) {
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake()}))
	tests := []struct {
		name, want string
		hdr        []string
	}{
		{"missing", "Authorization: Bearer <token>", nil},
		{"another scheme", "Authorization: Bearer <token>", []string{"Authorization", "Basic " + adminToken}},
		{"no token", "Authorization: Bearer <token>", []string{"Authorization", "Bearer "}},
		{"sent twice", "Authorization: Bearer <token>", append(append([]string{}, admin...), admin...)},
		{"wrong token", "the admin token is wrong", []string{"Authorization", "Bearer not-the-token"}},
		{"wrong token, lower-case scheme", "the admin token is wrong", []string{"Authorization", "bearer not-the-token"}},
	}
	for i, tt := range tests {
		addr := "192.0.2." + strconv.Itoa(i+1) // each from its own address: no limit
		msg := errorMessage(checkError(t, adminFrom(t, h, addr, tt.hdr), http.StatusUnauthorized, seckill.EUnauthenticated))
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s: message %q, want one with %q", tt.name, msg, tt.want)
		}
		if tt.want != "Authorization: Bearer <token>" && strings.Contains(msg, "Bearer") {
			t.Errorf("%s: a well-formed wrong token is sent to the Bearer form: %q", tt.name, msg)
		}
	}
}
