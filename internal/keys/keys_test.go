package keys_test

import (
	"testing"

	"github.com/seckill-oss/seckill/internal/keys"
)

// The names are part of what operators see in Redis and what runbooks quote:
// they must not move.
func TestNames(t *testing.T) {
	for got, want := range map[string]string{
		keys.NewSpace("t:").Stock(7):               "t:seckill:{act:7}:stock",
		keys.Space{}.Lock(7):                       "seckill:{act:7}:lock",
		keys.Space{}.PaymentOrderLock(7, "o1"):     "seckill:{act:7}:pay:order:o1",
		keys.Space{}.PaymentFence(7):               "seckill:{act:7}:pay",
		keys.Space{}.PaymentPolled(7, "o1"):        "seckill:{act:7}:pay:polled:o1",
		keys.NewSpace("p:").Activity(12, "buyers"): "p:seckill:{act:12}:buyers",
		keys.Space{}.Unknown(7):                    "seckill:{act:7}:unknown",
		keys.Space{}.UnknownBatch(7, "3:t:3"):      "seckill:{act:7}:unknown:3:t:3",
		keys.Space{}.WaitingRoom(7):                "seckill:{act:7}:room",
		keys.Space{}.WaitingLine(7):                "seckill:{act:7}:room:line",
		keys.Space{}.WaitingAdmitted(7):            "seckill:{act:7}:room:admitted",
		keys.Space{}.WaitingEnds(7):                "seckill:{act:7}:room:ends",
		keys.Space{}.WaitingDeducts(7):             "seckill:{act:7}:room:deducts",
		keys.Space{}.WaitingSeen(7):                "seckill:{act:7}:room:seen",
		keys.Space{}.WaitingDue(7):                 "seckill:{act:7}:room:due",
		keys.Space{}.WaitingNotes(7):               "seckill:{act:7}:room:notes",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
