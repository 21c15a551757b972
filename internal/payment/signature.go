package payment

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/seckill-oss/seckill"
)

// SignatureWindow is how far a callback's X-Signature-Timestamp may be from
// the service's clock, either way: a captured callback replays for no
// longer than this.
const SignatureWindow = 5 * time.Minute

// CheckSignature returns nil when signature is the callback signature of
// body by Config.Secret or Config.PreviousSecret (see Verifier.Check), else
// an EUnauthenticated *seckill.Error.
func (s *Service) CheckSignature(body []byte, signature, timestamp string) error {
	return Verifier{Secret: s.cfg.Secret, PreviousSecret: s.cfg.PreviousSecret, Now: s.now, RequireTimestamp: s.cfg.RequireTimestamp}.Check(body, signature, timestamp)
}

// Verifier checks callback signatures.
type Verifier struct {
	Secret []byte
	// PreviousSecret, when set, is accepted too (a rotation).
	PreviousSecret []byte
	// Now is the clock of the timestamp window; nil means time.Now.
	Now func() time.Time
	// RequireTimestamp refuses the body-only signature: a callback without
	// X-Signature-Timestamp is unauthenticated, so a captured callback
	// stops working after SignatureWindow.
	RequireTimestamp bool
}

// Check returns nil when signature is the hex HMAC-SHA256 by Secret or
// PreviousSecret of what the callback signs, else an EUnauthenticated
// *seckill.Error. timestamp is the X-Signature-Timestamp header ("": not
// sent): with one, the callback signs "<timestamp>.<body>" and the timestamp
// must be within SignatureWindow of now; without, the body alone (the
// contract's first form, kept for providers that send no timestamp).
func (v Verifier) Check(body []byte, signature, timestamp string) error {
	signed := body
	if timestamp == "" && v.RequireTimestamp {
		return seckill.Errorf(seckill.EUnauthenticated, "X-Signature-Timestamp is required: sign \"<timestamp>.<body>\" (SECKILL_PAYMENT_REQUIRE_TIMESTAMP)")
	}
	if timestamp != "" {
		ts, err := parseTimestamp(timestamp)
		if err != nil {
			return err
		}
		now := time.Now
		if v.Now != nil {
			now = v.Now
		}
		if d := now().Sub(ts); d > SignatureWindow || d < -SignatureWindow {
			return seckill.Errorf(seckill.EUnauthenticated, "X-Signature-Timestamp is more than %v from the service's clock", SignatureWindow)
		}
		signed = timestamped(timestamp, body)
	}
	err := VerifySignature(v.Secret, signed, signature)
	if err != nil && len(v.PreviousSecret) > 0 && VerifySignature(v.PreviousSecret, signed, signature) == nil {
		return nil
	}
	return err
}

// parseTimestamp reads unix seconds: ASCII digits, at most 12 of them (a
// year past 30000 is not a clock).
func parseTimestamp(v string) (time.Time, error) {
	bad := seckill.Errorf(seckill.EUnauthenticated, "X-Signature-Timestamp must be unix seconds")
	if len(v) > 12 {
		return time.Time{}, bad
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return time.Time{}, bad
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, bad
	}
	return time.Unix(n, 0), nil
}

// timestamped is what a timestamped callback signs: "<timestamp>.<body>".
func timestamped(timestamp string, body []byte) []byte {
	b := make([]byte, 0, len(timestamp)+1+len(body))
	b = append(b, timestamp...)
	b = append(b, '.')
	return append(b, body...)
}

// VerifySignature returns nil when signature is the hex (either case)
// HMAC-SHA256 of body under secret, compared in constant time; otherwise an
// EUnauthenticated *seckill.Error.
func VerifySignature(secret, body []byte, signature string) error {
	got, err := hex.DecodeString(signature)
	if err != nil || len(got) != sha256.Size {
		return seckill.Errorf(seckill.EUnauthenticated, "X-Signature must be the hex HMAC-SHA256 of the body")
	}
	if !hmac.Equal(got, Sign(secret, body)) {
		return seckill.Errorf(seckill.EUnauthenticated, "X-Signature does not match the body")
	}
	return nil
}

// Sign returns the HMAC-SHA256 of body under secret: hex-encoded, the
// X-Signature of a callback without a timestamp.
func Sign(secret, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return mac.Sum(nil)
}

// SignAt returns the X-Signature-Timestamp and X-Signature (hex) of a
// callback body signed at t: what providers should send.
func SignAt(secret, body []byte, t time.Time) (timestamp, signature string) {
	timestamp = strconv.FormatInt(t.Unix(), 10)
	return timestamp, hex.EncodeToString(Sign(secret, timestamped(timestamp, body)))
}
