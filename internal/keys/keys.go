// Package keys names the service's Redis keys, in one place, so no package
// spells another's keys.
//
// Every key of an activity carries the hash tag {act:N}: under Redis Cluster
// they all live in one slot, so the scripts that touch an activity's stock,
// lock, fence, receipts and payment locks together run on one node.
package keys

import "strconv"

// Namespace is what every key of the service starts with, <prefix>seckill:
// (the order events' stream is named by its own setting): the Redis ACL
// grants the service this namespace and the stream, nothing else.
func Namespace(prefix string) string { return prefix + "seckill:" }

// Activity names one of the activity's keys: <prefix>seckill:{act:N}:<name>.
func Activity(prefix string, activityID int64, name string) string {
	return Namespace(prefix) + "{act:" + strconv.FormatInt(activityID, 10) + "}:" + name
}

// Stock is the activity's stock hash (fields "remaining", "epoch" and "loaded"):
// <prefix>seckill:{act:N}:stock.
func Stock(prefix string, activityID int64) string { return Activity(prefix, activityID, "stock") }

// Lock is the activity's purchase lock, <prefix>seckill:{act:N}:lock; its
// fence counter is the lock package's to name.
// Buyers is the set of users a deduct took a unit for (the holders are
// among them); the waiting room reads it too.
func Buyers(prefix string, activityID int64) string { return Activity(prefix, activityID, "buyers") }

func Lock(prefix string, activityID int64) string { return Activity(prefix, activityID, "lock") }

// PaymentOrderLock is the lock of one order's payment verification:
// <prefix>seckill:{act:N}:pay:order:<id>.
func PaymentOrderLock(prefix string, activityID int64, orderID string) string {
	return Activity(prefix, activityID, "pay:order:"+orderID)
}

// PaymentFence is the lock key whose fence counter every payment lock of the
// activity shares (<prefix>seckill:{act:N}:pay), so no counter is left
// behind per order.
func PaymentFence(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "pay")
}

// PaymentQueryCounts holds, for the order's payment, how many provider
// queries started ("started") and the number of the last one whose answer
// was written ("answered"), in one hash with one TTL so neither outlives
// the other: <prefix>seckill:{act:N}:pay:counts:<id>.
func PaymentQueryCounts(prefix string, activityID int64, orderID string) string {
	return Activity(prefix, activityID, "pay:counts:"+orderID)
}

// PaymentPolled marks a result-page verification of the order in the last
// second: <prefix>seckill:{act:N}:pay:polled:<id>.
func PaymentPolled(prefix string, activityID int64, orderID string) string {
	return Activity(prefix, activityID, "pay:polled:"+orderID)
}

// The waiting room of an activity (internal/waitingroom): its hash (on,
// window, seed, counters), its line of places, its open admissions and its
// users' ends. The deduct reads the first two, so they share the stock's
// hash tag.

func WaitingRoom(prefix string, activityID int64) string { return Activity(prefix, activityID, "room") }

func WaitingLine(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:line")
}

func WaitingAdmitted(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:admitted")
}

func WaitingEnds(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:ends")
}

// WaitingDeducts is, for each admitted buyer, the receipt of the last
// grant that took units for them: one deduct an admission at a time.
func WaitingDeducts(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:deducts")
}

// WaitingSeen is when each admitted buyer was last seen (a poll, a
// purchase, the admission itself): user -> unix ms, for the idle lapse
// (SECKILL_ADMISSION_IDLE).
func WaitingSeen(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:seen")
}

// WaitingDue is when each user in line was told to come back (a join's or
// a poll's refresh_s): user -> unix ms. An admission's idle clock starts no
// earlier than that, so a buyer who polls as told never lapses for it.
func WaitingDue(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:due")
}

// WaitingNotes is the room's notes, a stream of the admissions and the
// closing, for the instances holding requests until a user's state changes
// (internal/waitingroom/note.lua).
func WaitingNotes(prefix string, activityID int64) string {
	return Activity(prefix, activityID, "room:notes")
}

// WaitingRooms is the set of activities with a waiting room, scored by
// their end (unix ms): what every instance's admitter walks.
func WaitingRooms(prefix string) string { return Namespace(prefix) + "rooms" }

// Unknown is an activity's buyers whose last batch had an unknown
// outcome (503 outcome_unknown) and is not yet resolved: user -> the
// batch's name, "<fence>:<token>"; UnknownBatch is that batch (its grant
// and orders), for the buyer's next purchase to resolve before it takes a
// unit (internal/stock/unknown.go).
func Unknown(prefix string, activityID int64) string { return Activity(prefix, activityID, "unknown") }

func UnknownBatch(prefix string, activityID int64, name string) string {
	return Activity(prefix, activityID, "unknown:"+name)
}
