package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// InvEvents is the order events' invariant (docs/API.md "Order events").
const InvEvents = "each committed status change has exactly one event id, none for an uncommitted one, in sequence order per order"

// eventsRead is what the campaign read of the events: the stream's
// (eventWatch) and the outbox table's, once every row was sent.
type eventsRead struct {
	stream  map[string]streamEvent
	orders  map[string][]string // each order's event ids, in the order first read
	broken  []string
	outbox  []outboxRow
	pending int64 // rows never marked sent
	// rows are the orders as read after the stream and the outbox, by a read
	// that did not move while they were read (watches.finish).
	rows []orderRow
}

type eventViolation struct{ order, what string }

// checkEventsOf is checkEvents' violations, each with the order's
// operations (none: the events of no one order).
func checkEventsOf(st finalState) []matched {
	if st.events == nil {
		return nil
	}
	var out []matched
	for _, v := range checkEvents(*st.events, st.events.rows) {
		id := v.order
		out = append(out, matched{InvEvents, v.what, func(o Op) bool { return id != "" && o.Order == id }})
	}
	return out
}

// nextEvent are the status changes an event may follow another with: those
// of the status checker (legalNext), and an operator's refund.
var nextEvent = map[string][]string{
	"order.created":         {"order.paid", "order.expired"},
	"order.expired":         {"order.refund_required"},
	"order.refund_required": {"order.refunded"},
}

// checkEvents holds the events read to the orders the database holds at the
// end. Each order's committed changes are its status history: its events
// are numbered 1..event_sequence (orders.event_sequence, which each change
// moves on in its transaction), the first order.created, each after it a
// legal change, the last its final status. The stream must hold exactly
// those: one event id for each number, every committed row of the outbox,
// no event of an order or a row the database does not hold, and each
// order's events first read in sequence order.
func checkEvents(ev eventsRead, orders []orderRow) []eventViolation {
	var out []eventViolation
	bad := func(order, format string, args ...any) {
		out = append(out, eventViolation{order, fmt.Sprintf(format, args...)})
	}
	for _, b := range ev.broken {
		bad("", "a stream entry that is no order event: %s", b)
	}
	if ev.pending > 0 {
		bad("", "%d committed events never marked sent, after the faults' end and the relays' leases", ev.pending)
	}
	committed := map[string]outboxRow{}
	for _, r := range ev.outbox {
		committed[r.id] = r
		if _, ok := ev.stream[r.id]; !ok && r.sent {
			bad(r.order, "event %s (order %s, sequence %d, %s) committed and marked sent, never read from the stream", r.id, r.order, r.sequence, r.typ)
		}
	}
	known := map[string]bool{}
	for _, o := range orders {
		known[o.ID] = true
		out = append(out, checkOrderEvents(ev, o)...)
	}
	ids := make([]string, 0, len(ev.stream))
	for id := range ev.stream {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e := ev.stream[id]
		if _, ok := committed[id]; !ok {
			bad(e.order, "event %s (order %s, sequence %d, %s, entry %s) has no committed row in the outbox", id, e.order, e.sequence, e.typ, e.entry)
		}
		if !known[e.order] {
			bad(e.order, "event %s (%s, entry %s) of order %s, which the database does not hold", id, e.typ, e.entry, e.order)
		}
	}
	return out
}

// checkOrderEvents checks one order's events against its final row.
func checkOrderEvents(ev eventsRead, o orderRow) []eventViolation {
	var out []eventViolation
	bad := func(format string, args ...any) {
		out = append(out, eventViolation{o.ID, fmt.Sprintf("order %s (%s, event_sequence %d): ", o.ID, o.Status, o.Events) + fmt.Sprintf(format, args...)})
	}
	bySeq := map[int64][]streamEvent{}
	var read []int64
	for _, id := range ev.orders[o.ID] {
		e := ev.stream[id]
		bySeq[e.sequence] = append(bySeq[e.sequence], e)
		read = append(read, e.sequence)
	}
	if !slices.IsSorted(read) {
		bad("its events were first read in the sequence order %v", read)
	}
	prev := ""
	for n := int64(1); n <= o.Events; n++ {
		es := bySeq[n]
		switch {
		case len(es) == 0:
			bad("no event read with sequence %d", n)
			prev = ""
			continue
		case len(es) > 1:
			bad("%d event ids for sequence %d: %s", len(es), n, eventList(es))
		}
		typ := es[0].typ
		if n == 1 && typ != "order.created" || n > 1 && prev != "" && !slices.Contains(nextEvent[prev], typ) {
			bad("event %d is %s after %q", n, typ, prev)
		}
		prev = typ
	}
	if prev != "" && prev != "order."+o.Status {
		bad("its last event is %s", prev)
	}
	for _, n := range slices.Sorted(maps.Keys(bySeq)) {
		if n < 1 || n > o.Events {
			bad("an event with sequence %d, past its committed changes: %s", n, eventList(bySeq[n]))
		}
	}
	return out
}

func eventList(es []streamEvent) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%s at %s", e.typ, e.entry))
	}
	return strings.Join(parts, ", ")
}
