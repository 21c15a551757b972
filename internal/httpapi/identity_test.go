package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

const identitySecret = "gateway-identity-secret"

// signedUser are the headers of a gateway-signed identity of id at t.
func signedUser(id string, t time.Time) []string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return []string{"X-User-ID", id, "X-User-Timestamp", ts, "X-User-Signature", hex.EncodeToString(SignIdentity([]byte(identitySecret), id, ts))}
}

// TestGatewaySignedIdentity: with SECKILL_IDENTITY_SECRET a buyer request
// needs the gateway's signature of its X-User-ID, made within ±5 minutes;
// without it every X-User-ID is trusted, as before.
func TestGatewaySignedIdentity(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	h := newTestServer(Config{IdentitySecret: []byte(identitySecret), Now: clock}, newFake())
	const mine = "/api/v1/activities/1/orders/mine"
	good := signedUser("42", now)
	withSig := func(sig string) []string {
		return []string{"X-User-ID", "42", "X-User-Timestamp", good[3], "X-User-Signature", sig}
	}
	tests := []struct {
		name   string
		header []string
		status int
	}{
		{"signed now", good, 200},
		{"signed 5 minutes ago", signedUser("42", now.Add(-5*time.Minute)), 200},
		{"signed in upper-case hex", withSig(upper(good[5])), 200},
		{"unsigned", user("42"), 401},
		{"no timestamp", []string{"X-User-ID", "42", "X-User-Signature", good[5]}, 401},
		{"another user's signature", append([]string{"X-User-ID", "43"}, good[2:]...), 401},
		{"signed 6 minutes ago (a replay)", signedUser("42", now.Add(-6*time.Minute)), 401},
		{"signed 6 minutes ahead", signedUser("42", now.Add(6*time.Minute)), 401},
		{"timestamp changed", []string{"X-User-ID", "42", "X-User-Timestamp", strconv.FormatInt(now.Unix()-1, 10), "X-User-Signature", good[5]}, 401},
		{"signature not hex", withSig("zz"), 401},
		{"signature cut short", withSig(good[5][:32]), 401},
		{"two signatures", append(good, "X-User-Signature", good[5]), 401},
		{"timestamp not a number", []string{"X-User-ID", "42", "X-User-Timestamp", "soon", "X-User-Signature", good[5]}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, request{"GET", mine, "", tt.header})
			if tt.status == 200 {
				checkBody(t, rec, 200, `{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:00:00Z"}`)
				return
			}
			checkError(t, rec, tt.status, seckill.EUnauthenticated)
			if rec.Header().Get("WWW-Authenticate") != buyerChallenge {
				t.Errorf("WWW-Authenticate %q, want %q", rec.Header().Get("WWW-Authenticate"), buyerChallenge)
			}
		})
	}
	// The purchase is held to it too.
	checkError(t, serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42")}), http.StatusUnauthorized, seckill.EUnauthenticated)
	if rec := serve(h, request{"POST", "/api/v1/activities/1/orders", "", good}); rec.Code != http.StatusCreated {
		t.Errorf("signed purchase: %d %s", rec.Code, rec.Body)
	}

	// Without a secret, as before: X-User-ID alone, signature headers ignored.
	off := newTestServer(Config{Now: clock}, newFake())
	for _, hdr := range [][]string{user("42"), signedUser("42", now.Add(-time.Hour))} {
		if rec := serve(off, request{"GET", mine, "", hdr}); rec.Code != 200 {
			t.Errorf("no secret, headers %v: %d %s", hdr, rec.Code, rec.Body)
		}
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// signedV2 are the headers of a version 2 signature of id at t for method
// and path.
func signedV2(method, path, id string, t time.Time) []string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return []string{"X-User-ID", id, "X-User-Timestamp", ts, IdentityVersionHeader, "2",
		"X-User-Signature", hex.EncodeToString(SignIdentityV2([]byte(identitySecret), method, path, id, ts))}
}

// TestGatewaySignedIdentityV2: version 2 covers the method and the path, so
// a purchase's signed headers do not open another route or activity; the
// legacy signature keeps working unless turned off; the timestamp must be a
// canonical decimal.
func TestGatewaySignedIdentityV2(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const (
		buy   = "/api/v1/activities/1/orders"
		mine  = "/api/v1/activities/1/orders/mine"
		other = "/api/v1/activities/2/orders"
	)
	ts := strconv.FormatInt(now.Unix(), 10)
	h := newTestServer(Config{IdentitySecret: []byte(identitySecret), Now: clock}, newFake())
	strict := newTestServer(Config{IdentitySecret: []byte(identitySecret), IdentityRejectLegacy: true, Now: clock}, newFake())

	purchase := signedV2("POST", buy, "42", now)
	for name, srv := range map[string]http.Handler{"default": h, "legacy off": strict} {
		if rec := serve(srv, request{"POST", buy, "", purchase}); rec.Code != http.StatusCreated {
			t.Errorf("%s: v2 purchase = %d %s", name, rec.Code, rec.Body)
		}
		if rec := serve(srv, request{"GET", mine, "", signedV2("GET", mine, "42", now)}); rec.Code != http.StatusOK {
			t.Errorf("%s: v2 orders/mine = %d %s", name, rec.Code, rec.Body)
		}
		// The purchase's headers replayed elsewhere.
		for _, r := range []request{
			{"GET", mine, "", purchase},   // another route
			{"POST", other, "", purchase}, // another activity
		} {
			if rec := serve(srv, r); rec.Code != http.StatusUnauthorized {
				t.Errorf("%s: purchase signature replayed on %s %s = %d, want 401", name, r.method, r.path, rec.Code)
			}
		}
		// Without its version header a v2 signature is no legacy one.
		if rec := serve(srv, request{"POST", buy, "", purchase[:6]}); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: v2 signature without a version = %d", name, rec.Code)
		}
		bad := func(version ...string) []string {
			hdr := append([]string{}, purchase[:4]...)
			for _, v := range version {
				hdr = append(hdr, IdentityVersionHeader, v)
			}
			return append(hdr, purchase[6:]...)
		}
		for _, hdr := range [][]string{bad("3"), bad("2", "2"), bad("v2"), bad("")} {
			checkError(t, serve(srv, request{"POST", buy, "", hdr}), http.StatusUnauthorized, seckill.EUnauthenticated)
		}
	}

	// The legacy signature: accepted by default, refused when turned off.
	legacy := signedUser("42", now)
	if rec := serve(h, request{"GET", mine, "", legacy}); rec.Code != http.StatusOK {
		t.Errorf("legacy by default = %d", rec.Code)
	}
	body := checkError(t, serve(strict, request{"GET", mine, "", legacy}), http.StatusUnauthorized, seckill.EUnauthenticated)
	if msg, _ := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, IdentityVersionHeader) {
		t.Errorf("legacy refused without naming the version header: %q", msg)
	}

	// Only a canonical decimal timestamp, in either version.
	for _, bad := range []string{"0" + ts, "+" + ts, " " + ts, ts + " ", "0"} {
		v1 := []string{"X-User-ID", "42", "X-User-Timestamp", bad, "X-User-Signature", hex.EncodeToString(SignIdentity([]byte(identitySecret), "42", bad))}
		v2 := []string{"X-User-ID", "42", "X-User-Timestamp", bad, IdentityVersionHeader, "2", "X-User-Signature", hex.EncodeToString(SignIdentityV2([]byte(identitySecret), "GET", mine, "42", bad))}
		for _, hdr := range [][]string{v1, v2} {
			req := httptest.NewRequest("GET", "http://seckill.test"+mine, nil)
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header[http.CanonicalHeaderKey(hdr[i])] = append(req.Header[http.CanonicalHeaderKey(hdr[i])], hdr[i+1])
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("timestamp %q (%s): %d, want 401", bad, hdr[4], rec.Code)
			}
		}
	}

	// Without a secret the version header is ignored like the others.
	off := newTestServer(Config{Now: clock}, newFake())
	if rec := serve(off, request{"GET", mine, "", signedV2("POST", buy, "42", now.Add(-time.Hour))}); rec.Code != http.StatusOK {
		t.Errorf("no secret: %d", rec.Code)
	}
}

// The signing string of version 2 is fixed: gateways implement it.
func TestSignIdentityV2String(t *testing.T) {
	mac := hmac.New(sha256.New, []byte(identitySecret))
	mac.Write([]byte("v2\nPOST\n/api/v1/activities/1/orders\n42\n1795338000"))
	if got := SignIdentityV2([]byte(identitySecret), "POST", "/api/v1/activities/1/orders", "42", "1795338000"); !hmac.Equal(got, mac.Sum(nil)) {
		t.Error("SignIdentityV2 is not HMAC-SHA256 of v2\\n<method>\\n<path>\\n<user id>\\n<timestamp>")
	}
}
