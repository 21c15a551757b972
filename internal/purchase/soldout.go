package purchase

import (
	"sync"
	"time"
)

// soldOutMarks remembers which activities were seen sold out, and when, so
// the sold-out storm after the last unit costs no Redis round trip.
//
// A mark comes from a look-up (a deduct, a read of the stock) that may race
// with a unit going back (an expiry's return, a settle): a return that lands
// after the look-up and clears the mark before the look-up's answer stores
// it would be overwritten, and the activity answered sold out for a unit it
// has. So a mark is stored only if no clear came since the look-up began:
// the caller reads the epoch before its look-up and passes it to mark.
type soldOutMarks struct {
	mu     sync.Mutex
	at     sync.Map // int64 -> time.Time, read lock-free by every purchase
	clears map[int64]uint64
}

// epoch is the activity's count of clears, read before a look-up whose
// answer may mark the activity sold out.
func (m *soldOutMarks) epoch(activityID int64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clears[activityID]
}

// mark records the activity as sold out at t, unless it was cleared since
// epoch was read.
func (m *soldOutMarks) mark(activityID int64, t time.Time, epoch uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clears[activityID] == epoch {
		m.at.Store(activityID, t)
	}
}

// clear forgets the activity's mark, and stops any look-up begun before it
// from marking it again.
func (m *soldOutMarks) clear(activityID int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clears == nil {
		m.clears = make(map[int64]uint64)
	}
	m.clears[activityID]++
	m.at.Delete(activityID)
}

// seen returns when the activity was marked sold out, if it is.
func (m *soldOutMarks) seen(activityID int64) (time.Time, bool) {
	at, ok := m.at.Load(activityID)
	if !ok {
		return time.Time{}, false
	}
	return at.(time.Time), true
}
