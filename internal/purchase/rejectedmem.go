package purchase

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/seckill-oss/seckill"
)

// rejectedFor is how long a rejection by the user check answers the same
// buyer's retries without asking again: long enough that a
// retrying app or a script costs the user service one call, short enough
// that a user the service clears a moment later can buy.
const rejectedFor = 5 * time.Second

// rejectedCap bounds the buyers remembered; past it the least recently
// rejected are forgotten, and the user check is asked again for them.
const rejectedCap = 1 << 16

// rejectedMemory remembers buyers the user check rejected, with the answer
// they were given, for rejectedFor.
type rejectedMemory struct {
	buyers *lru.Cache[buyer, rejection]
}

func newRejectedMemory() rejectedMemory {
	buyers, _ := lru.New[buyer, rejection](rejectedCap) // fails only for a size below 1
	return rejectedMemory{buyers: buyers}
}

type rejection struct {
	until   time.Time
	message string
}

// remember records that b was rejected at now with message.
func (m rejectedMemory) remember(b buyer, now time.Time, message string) {
	m.buyers.Add(b, rejection{until: now.Add(rejectedFor), message: message})
}

// recent returns the user_rejected answer of b when it was rejected less
// than rejectedFor before now.
func (m rejectedMemory) recent(b buyer, now time.Time) (*seckill.Error, bool) {
	r, ok := m.buyers.Get(b)
	if !ok {
		return nil, false
	}
	if !now.Before(r.until) {
		m.buyers.Remove(b)
		return nil, false
	}
	return &seckill.Error{Code: seckill.EUserRejected, Message: r.message}, true
}
