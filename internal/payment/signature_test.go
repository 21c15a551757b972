package payment_test

import (
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
)

func unauthenticated(err error) bool {
	var e *seckill.Error
	return errors.As(err, &e) && e.Code == seckill.EUnauthenticated
}

// TestSignatureTimestampAndRotation: the body-only signature of the
// contract still passes; a timestamped one passes within ±5 minutes and is
// refused outside them (a replay); a signature by the previous secret
// passes while it is configured, and by no other secret.
func TestSignatureTimestampAndRotation(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"order_id":"ord-1","status":"paid"}`)
	cur, prev := []byte("current-secret"), []byte("previous-secret")
	v := payment.Verifier{Secret: cur, PreviousSecret: prev, Now: func() time.Time { return now }}
	bodyOnly := func(secret []byte) string { return hex.EncodeToString(payment.Sign(secret, body)) }

	if err := v.Check(body, bodyOnly(cur), ""); err != nil {
		t.Errorf("body-only signature: %v", err)
	}
	// SECKILL_PAYMENT_REQUIRE_TIMESTAMP: the body-only form, which never
	// expires, is refused; the timestamped one is not.
	strict := v
	strict.RequireTimestamp = true
	if err := strict.Check(body, bodyOnly(cur), ""); !unauthenticated(err) {
		t.Errorf("body-only signature with the timestamp required: %v, want unauthenticated", err)
	}
	if ts, sig := payment.SignAt(cur, body, now); strict.Check(body, sig, ts) != nil {
		t.Errorf("timestamped signature with the timestamp required: %v", strict.Check(body, sig, ts))
	}
	for _, at := range []time.Duration{0, -5 * time.Minute, 5 * time.Minute, -time.Second} {
		ts, sig := payment.SignAt(cur, body, now.Add(at))
		if err := v.Check(body, sig, ts); err != nil {
			t.Errorf("signed at now%+v: %v", at, err)
		}
	}
	for _, at := range []time.Duration{-5*time.Minute - time.Second, 5*time.Minute + time.Second, -time.Hour} {
		ts, sig := payment.SignAt(cur, body, now.Add(at))
		if err := v.Check(body, sig, ts); !unauthenticated(err) {
			t.Errorf("signed at now%+v (replayed outside the window): %v, want unauthenticated", at, err)
		}
	}
	ts, sig := payment.SignAt(cur, body, now)
	if err := v.Check(body, bodyOnly(cur), ts); !unauthenticated(err) {
		t.Errorf("body-only signature sent with a timestamp: %v, want unauthenticated", err)
	}
	if err := v.Check(body, sig, ""); !unauthenticated(err) {
		t.Errorf("timestamped signature sent without its timestamp: %v, want unauthenticated", err)
	}
	if err := v.Check(body, sig, strconv.FormatInt(now.Unix()+1, 10)); !unauthenticated(err) {
		t.Errorf("timestamp changed after signing: %v, want unauthenticated", err)
	}
	for _, bad := range []string{"-1", "+1764064800", "1764064800.5", " 1764064800", "99999999999999999999", "0x10"} {
		if err := v.Check(body, sig, bad); !unauthenticated(err) {
			t.Errorf("timestamp %q: %v, want unauthenticated", bad, err)
		}
	}

	// Rotation: the previous secret is accepted in both forms while set.
	if err := v.Check(body, bodyOnly(prev), ""); err != nil {
		t.Errorf("body-only signature by the previous secret: %v", err)
	}
	ts, sig = payment.SignAt(prev, body, now)
	if err := v.Check(body, sig, ts); err != nil {
		t.Errorf("timestamped signature by the previous secret: %v", err)
	}
	if err := v.Check(body, bodyOnly([]byte("another-secret")), ""); !unauthenticated(err) {
		t.Errorf("signature by another secret: %v, want unauthenticated", err)
	}
	v.PreviousSecret = nil
	if err := v.Check(body, bodyOnly(prev), ""); !unauthenticated(err) {
		t.Errorf("previous secret after the rotation ended: %v, want unauthenticated", err)
	}
}
