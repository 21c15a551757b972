package purchase

import (
	"context"
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

// markNone marks the activity sold out at now when remaining is none,
// unless it was cleared since epoch was read.
func (m *soldOutMarks) markNone(activityID, remaining int64, now time.Time, epoch uint64) {
	if remaining <= 0 {
		m.mark(activityID, now, epoch)
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

// fresh reports whether the activity was seen sold out less than
// soldOutRecheck before now.
func (m *soldOutMarks) fresh(activityID int64, now time.Time) bool {
	at, ok := m.seen(activityID)
	return ok && now.Sub(at) < soldOutRecheck
}

// SoldOutEpoch is the activity's count of sold-out clears, read before a
// look-up of the stock that is then loaded (books.Sales).
func (s *Service) SoldOutEpoch(activityID int64) uint64 { return s.soldOut.epoch(activityID) }

// StockLoaded records that remaining units of the activity were loaded
// under its lock (books.Sales): the sold-out mark follows them, unless a
// unit went back since epoch, and so does the gauge.
func (s *Service) StockLoaded(activityID, remaining int64, epoch uint64) {
	if remaining > 0 {
		s.soldOut.clear(activityID)
	} else {
		s.soldOut.markNone(activityID, 0, s.now(), epoch)
	}
	s.m.remaining.WithLabelValues(itoa(activityID)).Set(float64(remaining))
}

// ClearSoldOut forgets the activity's sold-out mark: a unit went back to its
// stock outside the purchase path (an expired order), so it sells at once.
func (s *Service) ClearSoldOut(activityID int64) { s.soldOut.clear(activityID) }

// stillSoldOut reports whether the activity is sold out, for everyone queued,
// without the lock: from the sold-out mark while it is fresh, then from Redis
// (which the atomic deduct would consult anyway), refreshing the mark. A
// failed look-up says no; the deduct then reports what is wrong.
func (p *seller) stillSoldOut(activityID int64) bool {
	if _, marked := p.soldOut.seen(activityID); !marked {
		return false
	}
	if p.soldOut.fresh(activityID, p.now()) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	epoch := p.soldOut.epoch(activityID)
	left, err := p.stock.Remaining(ctx, activityID)
	switch {
	case err != nil:
		p.log.Warn("stock not read to recheck a sold-out mark; the batch goes on to the deduct", "activity_id", activityID, "err", err)
		return false
	case left <= 0:
		p.soldOut.mark(activityID, p.now(), epoch)
		return true
	}
	p.soldOut.clear(activityID)
	return false
}
