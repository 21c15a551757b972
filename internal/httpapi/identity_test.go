package httpapi

import (
	"encoding/hex"
	"net/http"
	"strconv"
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
				checkBody(t, rec, 200, `{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"created","created_at":"2026-11-22T10:00:00Z"}`)
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
