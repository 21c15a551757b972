package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The invariants the checker holds the history and the final state to.
const (
	InvNoOversell    = "no unit sold twice"
	InvRowFor201     = "every 201 has its row, of the units asked for"
	InvRowHasAnswer  = "a row only for a buyer told it may hold one"
	InvAnswerTrue    = "no order made during a request that answered nothing was sold"
	InvOnePerBuyer   = "at most one order per buyer per activity"
	InvStatusHistory = "every order's status history is legal"
	InvExpiryOneUnit = "each expiry gave back exactly its order's units"
	InvBooksBalance  = "the books balance within 30 s of the faults' end, with no command"
	InvLedger        = "every unit out of Redis's stock is in one receipt"
	InvFenceForward  = "the database's fence of an activity never goes back"
	InvHoldRowOthers = "while one activity's row is held, another's buyers are answered within the bound, never 503"
)

// Violation is one broken invariant, with the history around it.
type Violation struct {
	Invariant string
	What      string
	History   string
}

func (v Violation) String() string {
	return fmt.Sprintf("VIOLATION %s: %s\n%s", v.Invariant, v.What, v.History)
}

// orderRow is an order as the database holds it at the end.
type orderRow struct {
	ID       string
	Activity int64
	User     int64
	Status   string
	Created  time.Time // set by the service when it formed the order's batch
	// Events is the sequence of the order's last event: how many changes
	// of it committed, its creation included.
	Events int64
	// Units is the order's quantity: the units it holds.
	Units int64
}

// finalState is what the checker reads once the faults have stopped.
type finalState struct {
	orders     []orderRow
	activities []activityState
	readAt     time.Time
	ledger     []ledgerBreak // read all through the campaign (ledgerWatch)
	fences     []fenceBack   // read all through the campaign (fenceWatch)
	room       int64         // the activity with a waiting room (0: none)
	events     *eventsRead   // nil: not read (no Redis sink)
}

// check holds the history and the final state to every invariant.
func check(h *History, ops []Op, st finalState) []Violation {
	var vs []Violation
	add := func(inv, what string, match func(Op) bool) {
		vs = append(vs, Violation{Invariant: inv, What: what, History: h.Around(ops, match)})
	}
	byID := map[string]orderRow{}
	type buyer struct{ activity, user int64 }
	rowsOf := map[buyer][]orderRow{}
	for _, r := range st.orders {
		byID[r.ID] = r
		b := buyer{r.Activity, r.User}
		rowsOf[b] = append(rowsOf[b], r)
	}
	ofBuyer := func(b buyer) func(Op) bool {
		return func(o Op) bool { return o.Activity == b.activity && o.User == b.user }
	}

	for _, a := range st.activities {
		act := a.Books.ActivityID
		ofActivity := func(o Op) bool { return o.Activity == act && (o.Kind == "audit" || o.Status == 201) }
		for _, v := range a.Books.Violations() {
			if inv, ok := booksInvariants[v.Check]; ok {
				add(inv, "the books' last look: "+v.Message, ofActivity)
			}
		}
	}
	checkWatches(h, ops, st, add)
	for _, v := range append(append(checkRoomOf(ops, h.Faults(), st.room), checkEventsOf(st)...), checkUnits(st)...) {
		add(v.inv, v.what, v.match)
	}
	for _, o := range ops {
		if o.Kind == "audit" && o.Status == 200 && o.Detail != "" && strings.Contains(o.Detail, "oversold=true") {
			id := o.ID
			add(InvNoOversell, fmt.Sprintf("audit of activity %d said oversold", o.Activity), func(x Op) bool { return x.ID == id })
		}
	}

	// Every 201 has its row; note who was told something may be theirs.
	told := map[buyer]bool{}
	for _, o := range ops {
		if o.Kind != "buy" {
			continue
		}
		b := buyer{o.Activity, o.User}
		switch {
		case o.Status == 201:
			told[b] = true
			r, ok := byID[o.Order]
			if !ok || r.Activity != o.Activity || r.User != o.User || r.Units != int64(max(o.Quantity, 1)) {
				add(InvRowFor201, fmt.Sprintf("201 with order %s for user %d of activity %d: row %+v (found %v)", o.Order, o.User, o.Activity, r, ok), ofBuyer(b))
			}
		case o.Code == "already_purchased", o.Code == "outcome_unknown", o.Unknown:
			told[b] = true
		}
	}
	var buyers []buyer
	for b := range rowsOf {
		buyers = append(buyers, b)
	}
	sort.Slice(buyers, func(i, j int) bool {
		return buyers[i].activity < buyers[j].activity || buyers[i].activity == buyers[j].activity && buyers[i].user < buyers[j].user
	})
	for _, b := range buyers {
		rows := rowsOf[b]
		if len(rows) > 1 {
			add(InvOnePerBuyer, fmt.Sprintf("user %d holds %d orders of activity %d: %+v", b.user, len(rows), b.activity, rows), ofBuyer(b))
		}
		if !told[b] {
			add(InvRowHasAnswer, fmt.Sprintf("order %s of user %d, activity %d, exists, but every answer to the buyer said nothing was sold", rows[0].ID, b.user, b.activity), ofBuyer(b))
		}
	}

	for _, v := range checkMadeIn(ops, st) {
		add(InvAnswerTrue, v.what, ofBuyer(buyer{v.activity, v.user}))
	}

	for _, v := range checkStatuses(ops, st) {
		id := v.order
		add(InvStatusHistory, v.what, func(o Op) bool { return o.Order == id })
	}

	held, _ := checkHoldRows(ops, h.Faults(), HoldBound)
	for _, v := range held {
		n, act, from, to := v.purchase, v.held, v.from, v.to
		add(InvHoldRowOthers, v.what, func(o Op) bool {
			return o.Purchase == n || o.Activity == act && o.Kind == "buy" && o.Invoke.Before(to) && o.Complete.After(from)
		})
	}
	return vs
}

// faultWindow is when a scheduled fault acted: from its start to its heal,
// and its linger after that.
type faultWindow struct {
	n          int
	kind       string
	activity   int64
	start, end time.Time // end: the heal
	linger     time.Duration
}

// faultWindows pairs the scheduled faults' starts with their heals; a fault
// never healed acts to the end.
func faultWindows(faults []FaultEvent) []faultWindow {
	var out []faultWindow
	at := map[int]int{}
	for _, f := range faults {
		if f.N < 0 {
			continue
		}
		if !f.Heal {
			at[f.N] = len(out)
			out = append(out, faultWindow{n: f.N, kind: f.Kind, activity: f.Activity, start: f.At,
				end: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), linger: f.Linger})
			continue
		}
		if i, ok := at[f.N]; ok {
			out[i].end = f.At
		}
	}
	return out
}

// purchaseSpan is one buyer's purchase (Op.Purchase): its first request's
// invocation, and the completion of the request that answered it finally
// (anything the buyer does not try again after), or of its last operation
// when none did (it gave up after its tries, or the campaign ended).
type purchaseSpan struct {
	n          int
	activity   int64
	user       int64
	start, end time.Time
	first      int // op ID
	answer     string
	// refused is the first answer of its requests that said a dependency
	// failed (503 unavailable), "" when none did.
	refused string
}

func purchaseSpans(ops []Op) []purchaseSpan {
	var out []purchaseSpan
	at := map[int]int{}
	done := map[int]bool{}
	for _, o := range ops { // by invocation
		if o.Purchase == 0 {
			continue
		}
		i, ok := at[o.Purchase]
		if !ok {
			i = len(out)
			at[o.Purchase] = i
			out = append(out, purchaseSpan{n: o.Purchase, activity: o.Activity, user: o.User, start: o.Invoke, first: o.ID})
		}
		p := &out[i]
		if done[o.Purchase] {
			continue
		}
		if o.Complete.After(p.end) {
			p.end = o.Complete
		}
		p.answer = o.Answer()
		if o.Code == "unavailable" && p.refused == "" {
			p.refused = fmt.Sprintf("#%d %s", o.ID, o.Answer())
		}
		if o.Kind == "buy" && !retried(o) {
			done[o.Purchase] = true
		}
	}
	return out
}

// slows reports whether fault w, while it acts, may keep the buyer of p
// waiting by itself: every fault but a toxic on the payment link (a
// verification asks the provider before its transaction, and holds no row
// while it waits) and an expiry's COMMIT held by a late-status-commit, which
// holds its own activity's row only.
func slows(w faultWindow, p purchaseSpan) bool {
	switch {
	case w.kind == heldRow:
		return w.activity == p.activity
	case strings.HasSuffix(w.kind, "@"+LinkPayment):
		return false
	}
	return true
}

type holdViolation struct {
	purchase int
	held     int64 // the activity whose row was held
	from, to time.Time
	what     string
}

// checkHoldRows holds each purchase of an activity whose first request
// began while a hold-row held another activity's row to bound: from that
// request's invocation to its final answer. A purchase that another fault
// which may slow it (slows) overlapped, from its start to its heal plus its
// linger, is not counted: a killed instance, Redis down or a toxic may keep
// a buyer waiting longer by itself. counted is how many purchases were held
// to the bound.
func checkHoldRows(ops []Op, faults []FaultEvent, bound time.Duration) (out []holdViolation, counted int) {
	windows := faultWindows(faults)
	spans := purchaseSpans(ops)
	for _, h := range windows {
		if h.kind != HoldRow {
			continue
		}
	purchases:
		for _, p := range spans {
			if p.activity == h.activity || p.start.Before(h.start) || p.start.After(h.end) {
				continue
			}
			for _, w := range windows {
				if w.n != h.n && slows(w, p) && w.start.Before(p.end) && w.end.Add(w.linger).After(p.start) {
					continue purchases
				}
			}
			counted++
			if p.refused != "" {
				// The held row is no failure of this activity's
				// dependencies: a 503 here is another activity's row
				// stalling this one's write.
				out = append(out, holdViolation{purchase: p.n, held: h.activity, from: h.start, to: h.end, what: fmt.Sprintf(
					"activity %d's row held from outside for %v: buyer %d of activity %d, whose purchase began %v into the hold, was told %s, with no other fault on",
					h.activity, h.end.Sub(h.start).Round(time.Millisecond), p.user, p.activity, p.start.Sub(h.start).Round(time.Millisecond), p.refused)})
				continue
			}
			if waited := p.end.Sub(p.start); waited > bound {
				out = append(out, holdViolation{purchase: p.n, held: h.activity, from: h.start, to: h.end, what: fmt.Sprintf(
					"activity %d's row held from outside for %v: buyer %d of activity %d, whose purchase began %v into the hold (request #%d), waited %v for its answer (%s), past the bound of %v, with no other fault on",
					h.activity, h.end.Sub(h.start).Round(time.Millisecond), p.user, p.activity, p.start.Sub(h.start).Round(time.Millisecond),
					p.first, waited.Round(time.Millisecond), p.answer, bound)})
			}
		}
	}
	return out, counted
}

// legalNext: the status changes there are. An order is created, then paid
// or expired; an expired order paid late becomes refund_required.
var legalNext = map[string][]string{
	"created": {"paid", "expired"},
	"expired": {"refund_required"},
}

// reachable reports whether status to can follow from (from itself
// included); "" is before any observation.
func reachable(from, to string) bool {
	if from == "" || from == to {
		return true
	}
	for _, n := range legalNext[from] {
		if reachable(n, to) {
			return true
		}
	}
	return false
}

// statusModel is the porcupine model of one order's status: every
// observation (a 201, an already_purchased, a result page, a callback's
// answer, the final row) reads the status, and the service may move it
// along a legal change between two reads. A history is linearizable when
// the reads can be put in an order that respects real time and moves only
// forward along legal changes.
var statusModel = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, _ any) (bool, any) {
		from, to := state.(string), input.(string)
		if !reachable(from, to) {
			return false, state
		}
		return true, to
	},
	DescribeOperation: func(input, _ any) string { return "read " + input.(string) },
}

type statusViolation struct{ order, what string }

// checkStatuses checks each order's observed statuses with porcupine, the
// final row read last.
func checkStatuses(ops []Op, st finalState) []statusViolation {
	perOrder := map[string][]porcupine.Operation{}
	known := map[string]bool{"created": true, "paid": true, "expired": true, "refund_required": true}
	var out []statusViolation
	for _, o := range ops {
		if o.Unknown || o.Order == "" || o.OrderStatus == "" {
			continue
		}
		if !known[o.OrderStatus] {
			out = append(out, statusViolation{o.Order, fmt.Sprintf("order %s answered with status %q", o.Order, o.OrderStatus)})
			continue
		}
		perOrder[o.Order] = append(perOrder[o.Order], porcupine.Operation{
			ClientId: o.Client, Input: o.OrderStatus, Call: o.Invoke.UnixNano(), Return: o.Complete.UnixNano(),
		})
	}
	end := st.readAt.UnixNano()
	for _, r := range st.orders {
		if !known[r.Status] {
			out = append(out, statusViolation{r.ID, fmt.Sprintf("order %s has status %q in the database", r.ID, r.Status)})
			continue
		}
		perOrder[r.ID] = append(perOrder[r.ID], porcupine.Operation{ClientId: -1, Input: r.Status, Call: end, Return: end + 1})
	}
	ids := make([]string, 0, len(perOrder))
	for id := range perOrder {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if porcupine.CheckOperationsTimeout(statusModel, perOrder[id], 10*time.Second) == porcupine.Illegal {
			out = append(out, statusViolation{id, fmt.Sprintf("order %s: its observed statuses (final row last) follow no legal order of changes", id)})
		}
	}
	return out
}

// saidNothingSold reports whether a purchase's answer said that nothing was
// sold: any answer but a 201, already_purchased, outcome_unknown or none.
func saidNothingSold(o Op) bool {
	return !o.Unknown && o.Status != 201 && o.Code != "already_purchased" && o.Code != "outcome_unknown"
}

type madeInViolation struct {
	activity, user int64
	what           string
}

// checkMadeIn finds the orders made during a purchase request (the
// service's time of the order's batch lies between the request's invoke
// and its completion; a buyer's requests never overlap) that answered that
// nothing was sold. A request whose outcome the buyer did not learn
// (unknown, outcome_unknown) may still make an order later, during another
// request: a buyer with such a request before the order is left alone.
// already_purchased after a false "nothing sold" does not excuse it: the
// buyer was told something untrue, and a buyer who stops retrying keeps
// an order it does not know of.
func checkMadeIn(ops []Op, st finalState) []madeInViolation {
	type buyer struct{ activity, user int64 }
	buys := map[buyer][]Op{}
	for _, o := range ops {
		if o.Kind == "buy" {
			b := buyer{o.Activity, o.User}
			buys[b] = append(buys[b], o)
		}
	}
	var out []madeInViolation
	for _, r := range st.orders {
		if r.Created.IsZero() {
			continue
		}
		for _, o := range buys[buyer{r.Activity, r.User}] { // in invoke order
			if o.Unknown || o.Code == "outcome_unknown" {
				if o.Invoke.Before(r.Created) {
					break
				}
				continue
			}
			if r.Created.Before(o.Invoke) || r.Created.After(o.Complete) {
				continue
			}
			if saidNothingSold(o) {
				out = append(out, madeInViolation{r.Activity, r.User, fmt.Sprintf(
					"order %s of user %d, activity %d, was made at %s, during request #%d, which answered %s",
					r.ID, r.User, r.Activity, r.Created.Format("15:04:05.000000"), o.ID, o.Answer())})
			}
			break
		}
	}
	return out
}
