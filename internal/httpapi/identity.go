package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/seckill-oss/seckill"
)

// IdentityWindow is how far X-User-Timestamp may be from the service's
// clock, either way: a captured identity replays for no longer than this.
const IdentityWindow = 5 * time.Minute

// IdentityVersionHeader names the version of the gateway's signature: "3"
// for SignIdentityV3, "2" for SignIdentityV2 (requests without a body
// only); absent, the legacy SignIdentity.
const IdentityVersionHeader = "X-User-Signature-Version"

// checkIdentitySignature is the gateway-signed identity
// (SECKILL_IDENTITY_SECRET, docs/API.md "Conventions"): with a secret, the
// X-User-ID must come with X-User-Timestamp (canonical unix seconds within
// IdentityWindow of now) and X-User-Signature, the hex HMAC-SHA256 under
// the secret of the signing string, compared in constant time. It is for
// deployments where a client might reach the service without the gateway
// stripping its X-User-ID. With no secret every X-User-ID is trusted, as the
// contract's gateway sets it.
//
// Three signing strings: version 3 (X-User-Signature-Version: 3) covers the
// method, the path and the body (SignIdentityV3), so a captured purchase
// cannot be replayed with another body; version 2 covers the method and
// path only (SignIdentityV2), so it is accepted only for a request without a
// body; the legacy one (no version header) covers the user and the
// timestamp only (SignIdentity) and is accepted unless
// cfg.IdentityRejectLegacy (SECKILL_IDENTITY_LEGACY=false).
//
// Versions 2 and 3 read the body (capped by limitBody, so one over the limit
// is a 413) and leave an equal one on r for the handler.
func checkIdentitySignature(r *http.Request, userID string, cfg Config) error {
	secret := cfg.IdentitySecret
	if len(secret) == 0 {
		return nil
	}
	ts, ok1 := oneHeader(r.Header, "X-User-Timestamp")
	sig, ok2 := oneHeader(r.Header, "X-User-Signature")
	if !ok1 || !ok2 {
		return seckill.Errorf(seckill.EUnauthenticated, "the gateway must sign X-User-ID: send X-User-Timestamp and X-User-Signature once each")
	}
	want, err := expectedSignature(r, secret, userID, ts, cfg.IdentityRejectLegacy)
	if err != nil {
		return err
	}
	t, ok := unixSeconds(ts)
	if !ok {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Timestamp must be unix seconds as a canonical decimal (digits only, no leading zero)")
	}
	if d := cfg.now().Sub(t); d > IdentityWindow || d < -IdentityWindow {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Timestamp is more than %v from the service's clock", IdentityWindow)
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, want) {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Signature does not match the request")
	}
	return nil
}

// expectedSignature is the signature the request must carry, by the version
// it names.
func expectedSignature(r *http.Request, secret []byte, userID, ts string, rejectLegacy bool) ([]byte, error) {
	version := r.Header.Values(IdentityVersionHeader)
	switch {
	case len(version) == 0 && rejectLegacy:
		return nil, seckill.Errorf(seckill.EUnauthenticated, "the gateway must sign X-User-ID with signature version 3: send %s: 3", IdentityVersionHeader)
	case len(version) == 0:
		return SignIdentity(secret, userID, ts), nil
	case len(version) > 1 || version[0] != "2" && version[0] != "3":
		return nil, seckill.Errorf(seckill.EUnauthenticated, "%s must be sent once, as 3 (or 2 for a request without a body)", IdentityVersionHeader)
	}
	body, err := rereadableBody(r)
	if err != nil {
		return nil, err
	}
	if version[0] == "3" {
		return SignIdentityV3(secret, r.Method, r.URL.EscapedPath(), userID, ts, body), nil
	}
	if len(body) > 0 {
		return nil, seckill.Errorf(seckill.EUnauthenticated, "a request with a body must be signed with signature version 3 (%s: 3), which covers the body", IdentityVersionHeader)
	}
	return SignIdentityV2(secret, r.Method, r.URL.EscapedPath(), userID, ts), nil
}

// rereadableBody reads r's body and puts back a reader of the same bytes,
// so the handler reads what the signature covered. The body is capped by
// limitBody: past it, 413 request_too_large, as the handler would answer.
func rereadableBody(r *http.Request) ([]byte, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return body, nil
}

// SignIdentity is the gateway's legacy X-User-Signature of userID at
// timestamp (unix seconds as sent), before hex encoding: HMAC-SHA256 of
// "<user id>.<timestamp>". It holds for any request of that user within the
// window; prefer SignIdentityV2.
func SignIdentity(secret []byte, userID, timestamp string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(userID + "." + timestamp))
	return mac.Sum(nil)
}

// SignIdentityV2 is the gateway's X-User-Signature, version 2, of a request
// (sent with X-User-Signature-Version: 2), before hex encoding: HMAC-SHA256
// of
//
//	"v2\n<method>\n<path>\n<user id>\n<timestamp>"
//
// where method is the request's method in upper case as sent, path its path
// as the service receives it (escaped as on the request line, without the
// query), and timestamp the X-User-Timestamp value. Fields are joined by
// line feeds, which none of them can contain.
func SignIdentityV2(secret []byte, method, path, userID, timestamp string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("v2\n" + method + "\n" + path + "\n" + userID + "\n" + timestamp))
	return mac.Sum(nil)
}

// SignIdentityV3 is the gateway's X-User-Signature, version 3, of a request
// (sent with X-User-Signature-Version: 3), before hex encoding: HMAC-SHA256
// of
//
//	"v3\n<method>\n<path>\n<user id>\n<timestamp>\n<body sha256>"
//
// where the first four fields are as in SignIdentityV2 and the last is the
// lower-case hex SHA-256 of the raw request body (of the empty string when
// there is none). A signature made for one body does not hold for another.
func SignIdentityV3(secret []byte, method, path, userID, timestamp string, body []byte) []byte {
	sum := sha256.Sum256(body)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("v3\n" + method + "\n" + path + "\n" + userID + "\n" + timestamp + "\n" + hex.EncodeToString(sum[:])))
	return mac.Sum(nil)
}

// oneHeader returns the header's value when it was sent exactly once.
func oneHeader(h http.Header, name string) (string, bool) {
	v := h.Values(name)
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// unixSeconds reads unix seconds written as a canonical decimal: 1 to 12
// ASCII digits, no sign, no spaces, no leading zero, so one instant has one
// spelling (and one signature).
func unixSeconds(s string) (time.Time, bool) {
	if s == "" || len(s) > 12 || s[0] == '0' {
		return time.Time{}, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Unix(n, 0), err == nil
}
