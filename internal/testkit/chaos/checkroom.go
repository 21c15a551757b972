package chaos

import (
	"fmt"
	"strings"
	"time"
)

// The waiting room's invariants (docs/API.md "Waiting room"), over the room
// activity's operations (room.go).
const (
	InvAdmittedNotSoldOut = "no admitted buyer told sold_out outside a fault's linger"
	InvRoomAdmission      = "no 201 on the room's activity without an admission before it"
)

// admissionSlack is how long after admitted_until a purchase that began
// then may still be sold: the service reads the admission when the
// purchase reaches its deduct, which waits in the instance's queue for the
// batch (the lock wait) on a loaded machine.
const admissionSlack = lockWait + time.Second

// admission is one answer that said the buyer is admitted: seen during
// [from, to] (the answer's request), admitted until until.
type admission struct {
	from, to, until time.Time
}

// admissionsOf returns, per buyer of activity room, every answer that said
// it was admitted.
func admissionsOf(ops []Op, room int64) map[int64][]admission {
	out := map[int64][]admission{}
	for _, o := range ops {
		if o.Activity == room && (o.Kind == "join" || o.Kind == "queue") && o.QueueState == "admitted" && !o.AdmittedUntil.IsZero() {
			out[o.User] = append(out[o.User], admission{from: o.Invoke, to: o.Complete, until: o.AdmittedUntil})
		}
	}
	return out
}

// starves reports whether fault w, while it acts and lingers, may leave an
// admitted buyer of the room without the unit its admission holds: any
// fault but a toxic on the payment or the user-check link (neither touches
// the books) and a hold of another activity's row.
func starves(w faultWindow, room int64) bool {
	switch {
	case w.kind == HoldRow || w.kind == heldRow:
		return w.activity == room
	case strings.HasSuffix(w.kind, "@"+LinkPayment), strings.HasSuffix(w.kind, "@"+LinkUserCheck):
		return false
	}
	return true
}

// matched is a violation with the operations to show around it.
type matched struct {
	inv, what string
	match     func(Op) bool
}

// checkRoomOf is checkRoom's violations, each with the buyer's operations.
func checkRoomOf(ops []Op, faults []FaultEvent, room int64) []matched {
	vs, _ := checkRoom(ops, faults, room)
	out := make([]matched, 0, len(vs))
	for _, v := range vs {
		user := v.user
		out = append(out, matched{v.inv, v.what, func(o Op) bool { return o.Activity == room && o.User == user }})
	}
	return out
}

type roomViolation struct {
	inv  string
	op   int // the purchase's operation
	user int64
	what string
}

// checkRoom holds the room activity's purchases to the room's invariants:
// a purchase request of a buyer the history saw admitted, after that answer
// and completed before admitted_until, is never told sold_out (nor
// not_enough_stock) unless a fault that starves the room acted or lingered
// during it; a 201 comes only to a buyer seen admitted before the 201's
// request completed, with its purchase begun before admitted_until (and
// admissionSlack). counted is how many admitted requests the first was
// held to.
func checkRoom(ops []Op, faults []FaultEvent, room int64) (out []roomViolation, counted int) {
	if room == 0 {
		return nil, 0
	}
	adm := admissionsOf(ops, room)
	var windows []faultWindow
	for _, w := range faultWindows(faults) {
		if starves(w, room) {
			windows = append(windows, w)
		}
	}
	began := map[int]time.Time{} // each purchase's first request
	for _, o := range ops {
		if o.Purchase != 0 && o.Activity == room {
			if t, ok := began[o.Purchase]; !ok || o.Invoke.Before(t) {
				began[o.Purchase] = o.Invoke
			}
		}
	}
	for _, o := range ops {
		if o.Activity != room || o.Kind != "buy" || o.Unknown {
			continue
		}
		a, admitted := admittedThroughout(adm[o.User], o)
		if admitted && !faultDuring(windows, o.Invoke, o.Complete) {
			counted++
			if o.Code == "sold_out" || o.Code == "not_enough_stock" {
				out = append(out, roomViolation{InvAdmittedNotSoldOut, o.ID, o.User, fmt.Sprintf(
					"buyer %d of activity %d, seen admitted until %s, was told %s by request #%d, which completed %v before then, with no fault acting or lingering",
					o.User, room, a.until.Format("15:04:05.000"), o.Answer(), o.ID, a.until.Sub(o.Complete).Round(time.Millisecond))})
			}
		}
		if o.Status != 201 {
			continue
		}
		start, ok := began[o.Purchase]
		if !ok {
			start = o.Invoke
		}
		if !admittedBefore(adm[o.User], start, o.Complete) {
			out = append(out, roomViolation{InvRoomAdmission, o.ID, o.User, fmt.Sprintf(
				"buyer %d of activity %d was sold to (request #%d, order %s) without an admission seen before it that was open when its purchase began",
				o.User, room, o.ID, o.Order)})
		}
	}
	return out, counted
}

// admittedThroughout returns an admission seen before request o began whose
// until is after o completed: o lay inside it.
func admittedThroughout(adms []admission, o Op) (admission, bool) {
	for _, a := range adms {
		if !a.to.After(o.Invoke) && o.Complete.Before(a.until) {
			return a, true
		}
	}
	return admission{}, false
}

// admittedBefore reports whether an admission was seen before done (its
// answer's request began before) that was open at start, within
// admissionSlack.
func admittedBefore(adms []admission, start, done time.Time) bool {
	for _, a := range adms {
		if a.from.Before(done) && start.Before(a.until.Add(admissionSlack)) {
			return true
		}
	}
	return false
}

// faultDuring reports whether one of windows acted or lingered during
// [from, to].
func faultDuring(windows []faultWindow, from, to time.Time) bool {
	for _, w := range windows {
		if w.start.Before(to) && w.end.Add(w.linger).After(from) {
			return true
		}
	}
	return false
}
