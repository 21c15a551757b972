package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/seckill-oss/seckill"
)

// IdentityWindow is how far X-User-Timestamp may be from the service's
// clock, either way: a captured identity replays for no longer than this.
const IdentityWindow = 5 * time.Minute

// checkIdentitySignature is the gateway-signed identity
// (SECKILL_IDENTITY_SECRET, docs/API.md "Conventions"): with a secret, the
// X-User-ID must come with X-User-Timestamp (unix seconds within
// IdentityWindow of now) and X-User-Signature, the hex HMAC-SHA256 under
// secret of "<user id>.<timestamp>", compared in constant time. It is for
// deployments where a client might reach the service without the gateway
// stripping its X-User-ID. With no secret every X-User-ID is trusted, as the
// contract's gateway sets it.
func checkIdentitySignature(h http.Header, userID string, secret []byte, now time.Time) error {
	if len(secret) == 0 {
		return nil
	}
	ts, ok1 := oneHeader(h, "X-User-Timestamp")
	sig, ok2 := oneHeader(h, "X-User-Signature")
	if !ok1 || !ok2 {
		return seckill.Errorf(seckill.EUnauthenticated, "the gateway must sign X-User-ID: send X-User-Timestamp and X-User-Signature once each")
	}
	t, ok := unixSeconds(ts)
	if !ok {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Timestamp must be unix seconds")
	}
	if d := now.Sub(t); d > IdentityWindow || d < -IdentityWindow {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Timestamp is more than %v from the service's clock", IdentityWindow)
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, SignIdentity(secret, userID, ts)) {
		return seckill.Errorf(seckill.EUnauthenticated, "X-User-Signature does not match X-User-ID and X-User-Timestamp")
	}
	return nil
}

// SignIdentity is the gateway's X-User-Signature of userID at timestamp
// (unix seconds as sent), before hex encoding: HMAC-SHA256 of
// "<user id>.<timestamp>".
func SignIdentity(secret []byte, userID, timestamp string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(userID + "." + timestamp))
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

// unixSeconds reads 1 to 12 ASCII digits as unix seconds.
func unixSeconds(s string) (time.Time, bool) {
	if s == "" || len(s) > 12 {
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
