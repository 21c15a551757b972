package httpapi

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/seckill-oss/seckill/internal/payment"
)

// How a FuzzCallback input is signed.
const (
	fuzzSignBody      = iota // the body-only signature of the contract
	fuzzSignTimestamp        // with X-Signature-Timestamp, now
	fuzzSignStale            // with X-Signature-Timestamp, 6 minutes ago: a replay
	fuzzSignOther            // by another secret
	fuzzSignRaw              // the fuzzed signature and timestamp as they are
	fuzzSignModes
)

// FuzzCallback drives the payment callback with hostile bodies and
// signatures. The oracle: never a 5xx; 401 unless correctly signed (within
// the window); a signed body without a string "order_id" is 400; only a
// signed body with one reaches the payment flow.
func FuzzCallback(f *testing.F) {
	for _, body := range []string{
		`{"order_id":"ord-42"}`, `{"order_id":"ord-42","status":"paid","extra":[1,{"a":null}]}`,
		`{"order_id":"ord-7"}`, `{"order_id":42}`, `{"order_id":null}`, `{"status":"paid"}`, `{}`, `[]`, `"ord-42"`,
		`{"order_id":"ord-42"}garbage`, `{"order_id":"ord-42"}{"order_id":"ord-42"}`, `{"order_id":"ord-42","order_id":"ord-7"}`,
		`{"ORDER_ID":"ord-42"}`, `{"order_id":""}`, `{"order_id":"a b"}`, "{\"order_id\":\"ord-42\",\"x\":\"\xff\"}", ``, `{`, `null`,
	} {
		for mode := range uint8(fuzzSignModes) {
			f.Add([]byte(body), mode, "00", "")
		}
	}
	f.Add([]byte(`{"order_id":"ord-42"}`), uint8(fuzzSignRaw), hex.EncodeToString(payment.Sign([]byte(callbackSecret), []byte(`{"order_id":"ord-42"}`))), "")
	f.Add([]byte(`{"order_id":"ord-42"}`), uint8(fuzzSignRaw), "zz", "-1")
	f.Add([]byte(`{"order_id":"ord-42"}`), uint8(fuzzSignRaw), "", "99999999999999999999")

	pay := newFakePayments()
	h := NewServer(Config{}, withParts(Deps{Service: newFake(), Payments: pay}))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8, sig, ts string) {
		signed, sure := true, true
		now := time.Now()
		switch mode % fuzzSignModes {
		case fuzzSignBody:
			sig, ts = hex.EncodeToString(payment.Sign([]byte(callbackSecret), body)), ""
		case fuzzSignTimestamp:
			ts, sig = payment.SignAt([]byte(callbackSecret), body, now)
		case fuzzSignStale:
			ts, sig = payment.SignAt([]byte(callbackSecret), body, now.Add(-6*time.Minute))
			signed = false
		case fuzzSignOther:
			ts, sig = payment.SignAt([]byte("another-secret"), body, now)
			signed = false
		case fuzzSignRaw:
			signed, sure = rawSigned(body, sig, ts, now)
		}
		req := httptest.NewRequest(http.MethodPost, "http://seckill.test/api/v1/payments/callback", bytes.NewReader(body))
		if sig != "" || mode%fuzzSignModes != fuzzSignRaw {
			req.Header.Set("X-Signature", sig)
		}
		if ts != "" {
			req.Header.Set("X-Signature-Timestamp", ts)
		}
		pay.callbacks = pay.callbacks[:0]
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		reached := len(pay.callbacks) > 0
		hasID := hasStringOrderID(body)
		switch {
		case !sure:
			if rec.Code >= 500 {
				t.Fatalf("%d for body %q: %s", rec.Code, body, rec.Body)
			}
		case rec.Code >= 500:
			t.Fatalf("%d for body %q: %s", rec.Code, body, rec.Body)
		case !signed && rec.Code != http.StatusUnauthorized:
			t.Fatalf("unsigned callback answered %d, want 401: body %q, sig %q, ts %q", rec.Code, body, sig, ts)
		case signed && !hasID && rec.Code != http.StatusBadRequest:
			t.Fatalf("signed body without a string order_id answered %d, want 400: %q", rec.Code, body)
		case reached && (!signed || !hasID):
			t.Fatalf("callback reached the payment flow: signed %v, body %q", signed, body)
		}
	})
}

// rawSigned is the oracle of a fuzzed signature: whether the contract
// accepts it; sure is false for a timestamp within a second of the window's
// edge, where the oracle's clock and the service's may disagree.
func rawSigned(body []byte, sig, ts string, now time.Time) (signed, sure bool) {
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false, true
	}
	if ts == "" {
		return string(got) == string(payment.Sign([]byte(callbackSecret), body)), true
	}
	if len(ts) > 12 {
		return false, true
	}
	for i := 0; i < len(ts); i++ {
		if ts[i] < '0' || ts[i] > '9' {
			return false, true
		}
	}
	n, _ := strconv.ParseInt(ts, 10, 64)
	d := now.Sub(time.Unix(n, 0)).Abs()
	if d > payment.SignatureWindow+time.Second {
		return false, true
	}
	ok := string(got) == string(payment.Sign([]byte(callbackSecret), []byte(ts+"."+string(body))))
	return ok, !ok || d < payment.SignatureWindow-time.Second
}

// hasStringOrderID reports whether body is one JSON object (valid UTF-8)
// with a member order_id whose value is a string.
func hasStringOrderID(body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return false
	}
	raw, ok := m["order_id"]
	return ok && len(raw) > 0 && raw[0] == '"'
}
