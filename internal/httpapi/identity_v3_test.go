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

// signedV3 are the headers of a version 3 signature of id at t for method,
// path and body.
func signedV3(method, path, id string, t time.Time, body string) []string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return []string{"X-User-ID", id, "X-User-Timestamp", ts, IdentityVersionHeader, "3",
		"X-User-Signature", hex.EncodeToString(SignIdentityV3([]byte(identitySecret), method, path, id, ts, []byte(body)))}
}

// signedV3Server is a server with identity signatures on whose purchases
// record the quantity the handler read.
func signedV3Server(now time.Time, rejectLegacy bool, quantities *[]int64) http.Handler {
	f := newFake()
	buy := f.buy
	f.buy = func(r seckill.BuyRequest) (seckill.Order, error) {
		*quantities = append(*quantities, r.Quantity)
		return buy(r)
	}
	cfg := Config{IdentitySecret: []byte(identitySecret), IdentityRejectLegacy: rejectLegacy, Now: func() time.Time { return now }}
	return newTestServer(cfg, f)
}

// TestGatewaySignedIdentityV3: version 3 covers the body, so a captured
// purchase cannot be replayed with another quantity; version 2 is refused on
// a request with a body (naming version 3) and still accepted without one;
// the handler reads the body the signature covered.
// Can fail: a signing string without the body's hash (the replay is sold),
// a v2 signature accepted on a body (the v2 replay is sold), v2 refused
// without a body, or a body the hashing consumed (the handler reads none).
func TestGatewaySignedIdentityV3(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	const (
		buy  = "/api/v1/activities/1/orders"
		mine = "/api/v1/activities/1/orders/mine"
		one  = `{"quantity":1}`
		two  = `{"quantity":2}`
	)
	for _, rejectLegacy := range []bool{false, true} {
		var quantities []int64
		h := signedV3Server(now, rejectLegacy, &quantities)
		name := "legacy off=" + strconv.FormatBool(rejectLegacy)

		// The right v3 signature is accepted, and the handler reads its body.
		captured := signedV3("POST", buy, "42", now, two)
		if rec := serve(h, request{"POST", buy, two, captured}); rec.Code != http.StatusCreated {
			t.Fatalf("%s: v3 purchase of 2 = %d %s", name, rec.Code, rec.Body)
		}
		if len(quantities) != 1 || quantities[0] != 2 {
			t.Errorf("%s: the handler read quantities %v after the signature's hash, want [2]", name, quantities)
		}
		for _, r := range []request{
			{"POST", buy, "", signedV3("POST", buy, "42", now, "")},
			{"GET", mine, "", signedV3("GET", mine, "42", now, "")},
		} {
			if rec := serve(h, r); rec.Code >= 300 {
				t.Errorf("%s: v3 %s %s without a body = %d %s", name, r.method, r.path, rec.Code, rec.Body)
			}
		}

		// A captured purchase replayed with another quantity (or with none).
		for _, body := range []string{one, `{"quantity":2} `, ""} {
			rec := serve(h, request{"POST", buy, body, captured})
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%s: a captured v3 purchase of 2 replayed with body %q = %d %s, want 401", name, body, rec.Code, rec.Body)
				continue
			}
			checkError(t, rec, http.StatusUnauthorized, seckill.EUnauthenticated)
		}
		// Its v2 twin: a body signed as version 2 is refused, whatever it is.
		v2 := signedV2("POST", buy, "42", now)
		for _, body := range []string{one, two} {
			rec := serve(h, request{"POST", buy, body, v2})
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%s: a v2 purchase with body %q = %d %s, want 401", name, body, rec.Code, rec.Body)
				continue
			}
			msg := errorMessage(checkError(t, rec, http.StatusUnauthorized, seckill.EUnauthenticated))
			if !strings.Contains(msg, "version 3") {
				t.Errorf("%s: v2 with a body refused without naming version 3: %q", name, msg)
			}
		}
		// Version 2 without a body is still accepted.
		if rec := serve(h, request{"POST", buy, "", v2}); rec.Code != http.StatusCreated {
			t.Errorf("%s: v2 purchase without a body = %d %s", name, rec.Code, rec.Body)
		}
		if rec := serve(h, request{"GET", mine, "", signedV2("GET", mine, "42", now)}); rec.Code != http.StatusOK {
			t.Errorf("%s: v2 orders/mine = %d %s", name, rec.Code, rec.Body)
		}
		if len(quantities) != 3 {
			t.Errorf("%s: %d purchases reached the service, want 3 (%v)", name, len(quantities), quantities)
		}
	}
}

// TestSignedBodyOverLimit: a signed body of unknown length over the limit
// is 413 request_too_large, as the handler would answer, not a 401.
// Can fail: the signature's read of the body turning the limit into a 401
// or reading past it.
func TestSignedBodyOverLimit(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	var quantities []int64
	h := signedV3Server(now, true, &quantities)
	const buy = "/api/v1/activities/1/orders"
	big := `{"quantity":1}` + strings.Repeat(" ", MaxBodyBytes)
	for _, version := range []string{"2", "3"} {
		hdr := signedV3("POST", buy, "42", now, big)
		hdr[5] = version
		req := httptest.NewRequest("POST", "http://seckill.test"+buy, strings.NewReader(big))
		req.ContentLength = -1 // chunked: only reading finds the size
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Add(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkError(t, rec, http.StatusRequestEntityTooLarge, seckill.ETooLarge)
		if rec.Header().Get("WWW-Authenticate") != "" {
			t.Errorf("v%s: a 413 with a challenge %q", version, rec.Header().Get("WWW-Authenticate"))
		}
	}
	if len(quantities) != 0 {
		t.Errorf("bodies over the limit bought %v", quantities)
	}
}

// The signing string of version 3 is fixed: gateways implement it.
func TestSignIdentityV3String(t *testing.T) {
	for _, body := range []string{"", `{"quantity":2}`} {
		sum := sha256.Sum256([]byte(body))
		mac := hmac.New(sha256.New, []byte(identitySecret))
		mac.Write([]byte("v3\nPOST\n/api/v1/activities/1/orders\n42\n1795338000\n" + hex.EncodeToString(sum[:])))
		got := SignIdentityV3([]byte(identitySecret), "POST", "/api/v1/activities/1/orders", "42", "1795338000", []byte(body))
		if !hmac.Equal(got, mac.Sum(nil)) {
			t.Errorf("SignIdentityV3(body %q) is not HMAC-SHA256 of v3\\n<method>\\n<path>\\n<user id>\\n<timestamp>\\n<body sha256>", body)
		}
	}
	if got := hex.EncodeToString(SignIdentityV3([]byte(identitySecret), "POST", "/p", "42", "1795338000", nil)); got !=
		hex.EncodeToString(SignIdentityV3([]byte(identitySecret), "POST", "/p", "42", "1795338000", []byte{})) {
		t.Error("no body and an empty body sign differently")
	}
}

// errorMessage is the message of a decoded error answer.
func errorMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}
