package purchase

import (
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
)

// rejectedFor is how long a rejection by the user check answers the same
// buyer's retries without asking again: long enough that a
// retrying app or a script costs the user service one call, short enough
// that a user the service clears a moment later can buy.
const rejectedFor = 5 * time.Second

// rejectedCap bounds the buyers remembered; past it (after the expired are
// dropped) a rejection is not remembered, and the user check is asked again.
const rejectedCap = 1 << 16

// rejectedMemory remembers buyers the user check rejected, with the answer
// they were given, for rejectedFor.
type rejectedMemory struct {
	mu     sync.Mutex
	buyers map[buyer]rejection
	swept  time.Time // last drop of the expired, at most once per rejectedFor
}

type rejection struct {
	until   time.Time
	message string
}

// remember records that b was rejected at now with message.
func (m *rejectedMemory) remember(b buyer, now time.Time, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buyers == nil {
		m.buyers = make(map[buyer]rejection)
	}
	if len(m.buyers) >= rejectedCap && now.Sub(m.swept) >= rejectedFor {
		m.swept = now
		for k, r := range m.buyers {
			if !now.Before(r.until) {
				delete(m.buyers, k)
			}
		}
	}
	if _, known := m.buyers[b]; !known && len(m.buyers) >= rejectedCap {
		return
	}
	m.buyers[b] = rejection{until: now.Add(rejectedFor), message: message}
}

// recent returns the user_rejected answer of b when it was rejected less
// than rejectedFor before now.
func (m *rejectedMemory) recent(b buyer, now time.Time) (*seckill.Error, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.buyers[b]
	if !ok {
		return nil, false
	}
	if !now.Before(r.until) {
		delete(m.buyers, b)
		return nil, false
	}
	return &seckill.Error{Code: seckill.EUserRejected, Message: r.message}, true
}
