// Package keys names the service's Redis keys, in one place, so no package
// spells another's keys.
//
// Every key of an activity carries the hash tag {act:N}: under Redis Cluster
// they all live in one slot, so the scripts that touch an activity's stock,
// lock, fence, receipts and payment locks together run on one node.
package keys

import (
	"strconv"
	"strings"
)

// Space is the service's key space: every key it names starts with its
// prefix (SECKILL_KEY_PREFIX), so several deployments or test runs can
// share one Redis. The zero Space has no prefix. It is built once from the
// settings and handed to every store and service that names keys.
type Space struct{ prefix string }

// NewSpace is the key space whose keys start with prefix.
func NewSpace(prefix string) Space { return Space{prefix: prefix} }

// Namespace is what every key of the service starts with, <prefix>seckill:
// (the order events' stream is named by its own setting): the Redis ACL
// grants the service this namespace and the stream, nothing else.
func (s Space) Namespace() string { return s.prefix + "seckill:" }

// Activity names one of the activity's keys: <prefix>seckill:{act:N}:<name>.
func (s Space) Activity(activityID int64, name string) string {
	return s.Namespace() + "{act:" + strconv.FormatInt(activityID, 10) + "}:" + name
}

// Stock is the activity's stock hash (its fields: StockFields):
// <prefix>seckill:{act:N}:stock.
func (s Space) Stock(activityID int64) string { return s.Activity(activityID, "stock") }

// Buyers is the set of users a deduct took a unit for (the holders are
// among them); the waiting room reads it too.
func (s Space) Buyers(activityID int64) string { return s.Activity(activityID, "buyers") }

// Lock is the activity's purchase lock, <prefix>seckill:{act:N}:lock; its
// fence counter is the lock package's to name.
func (s Space) Lock(activityID int64) string { return s.Activity(activityID, "lock") }

// PaymentOrderLock is the lock of one order's payment verification:
// <prefix>seckill:{act:N}:pay:order:<id>.
func (s Space) PaymentOrderLock(activityID int64, orderID string) string {
	return s.Activity(activityID, "pay:order:"+orderID)
}

// PaymentFence is the lock key whose fence counter every payment lock of the
// activity shares (<prefix>seckill:{act:N}:pay), so no counter is left
// behind per order.
func (s Space) PaymentFence(activityID int64) string {
	return s.Activity(activityID, "pay")
}

// PaymentQueryCounts holds, for the order's payment, how many provider
// queries started ("started") and the number of the last one whose answer
// was written ("answered"), in one hash with one TTL so neither outlives
// the other: <prefix>seckill:{act:N}:pay:counts:<id>.
func (s Space) PaymentQueryCounts(activityID int64, orderID string) string {
	return s.Activity(activityID, "pay:counts:"+orderID)
}

// PaymentPolled marks a result-page verification of the order in the last
// second: <prefix>seckill:{act:N}:pay:polled:<id>.
func (s Space) PaymentPolled(activityID int64, orderID string) string {
	return s.Activity(activityID, "pay:polled:"+orderID)
}

// The waiting room of an activity (internal/waitingroom): its hash (on,
// window, seed, counters), its line of places, its open admissions and its
// users' ends. The deduct reads the first two, so they share the stock's
// hash tag.

func (s Space) WaitingRoom(activityID int64) string { return s.Activity(activityID, "room") }

// room names one of the room's other keys: <prefix>seckill:{act:N}:room:<name>.
func (s Space) room(activityID int64, name string) string {
	return s.Activity(activityID, "room:"+name)
}

func (s Space) WaitingLine(activityID int64) string { return s.room(activityID, "line") }

func (s Space) WaitingAdmitted(activityID int64) string { return s.room(activityID, "admitted") }

func (s Space) WaitingEnds(activityID int64) string { return s.room(activityID, "ends") }

// WaitingDeducts is, for each admitted buyer, the receipt of the last
// grant that took units for them: one deduct an admission at a time.
func (s Space) WaitingDeducts(activityID int64) string { return s.room(activityID, "deducts") }

// WaitingSeen is when each admitted buyer was last seen (a poll, a
// purchase, the admission itself): user -> unix ms, for the idle lapse
// (SECKILL_ADMISSION_IDLE).
func (s Space) WaitingSeen(activityID int64) string { return s.room(activityID, "seen") }

// WaitingDue is when each user in line was told to come back (a join's or
// a poll's refresh_s): user -> unix ms. An admission's idle clock starts no
// earlier than that, so a buyer who polls as told never lapses for it.
func (s Space) WaitingDue(activityID int64) string { return s.room(activityID, "due") }

// WaitingNotes is the room's notes, a stream of the admissions and the
// closing, for the instances holding requests until a user's state changes
// (internal/waitingroom/note.lua).
func (s Space) WaitingNotes(activityID int64) string { return s.room(activityID, "notes") }

// WaitingRooms is the set of activities with a waiting room, scored by
// their end (unix ms): what every instance's admitter walks.
func (s Space) WaitingRooms() string { return s.Namespace() + "rooms" }

// Unknown is an activity's buyers whose last batch had an unknown
// outcome (503 outcome_unknown) and is not yet resolved: user -> the
// batch's name, "<fence>:<token>"; UnknownBatch is that batch (its grant
// and orders), for the buyer's next purchase to resolve before it takes a
// unit (internal/stock/unknown.go).
func (s Space) Unknown(activityID int64) string { return s.Activity(activityID, "unknown") }

func (s Space) UnknownBatch(activityID int64, name string) string {
	return s.Activity(activityID, "unknown:"+name)
}

// Glob escapes s for a Redis glob pattern (SCAN's MATCH, an ACL's key and
// channel patterns): it matches s alone.
func Glob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
