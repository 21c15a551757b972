package purchase

import (
	"errors"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

func TestRejectedMessageKeepsTheVerifiersReason(t *testing.T) {
	got := rejectedMessage(&usercheck.RejectedError{Reason: "account under\x00 review"})
	if !strings.HasSuffix(got, ": account under review") {
		t.Errorf("message %q, want the verifier's reason without control characters", got)
	}
	long := rejectedMessage(&usercheck.RejectedError{Reason: strings.Repeat("x", 1000)})
	if n := len(long); n > 300 {
		t.Errorf("message of %d bytes for a 1000-byte reason, want it bounded", n)
	}
	if got := rejectedMessage(errors.New("other")); strings.Contains(got, ":") {
		t.Errorf("message %q for an error without a reason", got)
	}
}
