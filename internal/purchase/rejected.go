package purchase

import (
	"errors"
	"strings"
	"unicode"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// maxReasonRunes bounds the verifier's reason shown to the buyer.
const maxReasonRunes = 200

// rejectedMessage is the user_rejected message, with the verifier's reason
// (the buyer's app can show it: "account under review", ...). The reason comes
// from another service, so control characters are dropped and it is bounded.
func rejectedMessage(err error) string {
	const base = "the user-verification service does not allow this user to buy"
	var r *usercheck.RejectedError
	if !errors.As(err, &r) {
		return base
	}
	reason := strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return -1
		}
		return c
	}, strings.TrimSpace(r.Reason))
	if rs := []rune(reason); len(rs) > maxReasonRunes {
		reason = string(rs[:maxReasonRunes]) + "..."
	}
	if reason == "" {
		return base
	}
	return base + ": " + reason
}
