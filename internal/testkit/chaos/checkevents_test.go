package chaos

import (
	"strings"
	"testing"
)

// The events' checker cases: a clean history passes, and each way of
// breaking the invariant fails.
func TestCheckEvents(t *testing.T) {
	orders := []orderRow{
		{ID: "o1", Status: "paid", Events: 2},
		{ID: "o2", Status: "refund_required", Events: 3},
		{ID: "o3", Status: "created", Events: 1},
	}
	type ev struct {
		id, order, typ string
		seq            int64
	}
	clean := []ev{
		{"e1", "o1", "order.created", 1}, {"e2", "o2", "order.created", 1}, {"e3", "o1", "order.paid", 2},
		{"e4", "o2", "order.expired", 2}, {"e5", "o3", "order.created", 1}, {"e6", "o2", "order.refund_required", 3},
	}
	read := func(stream []ev, outbox []ev) eventsRead {
		r := eventsRead{stream: map[string]streamEvent{}, orders: map[string][]string{}}
		for i, e := range stream {
			if _, ok := r.stream[e.id]; ok {
				continue // a redelivery
			}
			r.stream[e.id] = streamEvent{order: e.order, sequence: e.seq, typ: e.typ, entry: string(rune('a' + i))}
			r.orders[e.order] = append(r.orders[e.order], e.id)
		}
		for _, e := range outbox {
			r.outbox = append(r.outbox, outboxRow{id: e.id, order: e.order, typ: e.typ, sequence: e.seq, sent: true})
		}
		return r
	}
	without := func(id string) []ev {
		var out []ev
		for _, e := range clean {
			if e.id != id {
				out = append(out, e)
			}
		}
		return out
	}
	uncommitted := append(append([]ev{}, clean...), ev{"e7", "o3", "order.paid", 2})
	for _, c := range []struct {
		name           string
		stream, outbox []ev
		orders         []orderRow
		wants          []string // a piece of each violation's text
	}{
		{"clean", clean, clean, orders, nil},
		{"clean, with redeliveries", append(append([]ev{}, clean...), clean[0], clean[3]), clean, orders, nil},
		{"a committed event lost", without("e3"), clean, orders, []string{"never read from the stream", "no event read with sequence 2"}},
		{"an event of an uncommitted change", uncommitted, clean, orders, []string{"past its committed changes", "no committed row"}},
		{"two event ids for one change", append(append([]ev{}, clean...), ev{"e8", "o1", "order.paid", 2}), append(append([]ev{}, clean...), ev{"e8", "o1", "order.paid", 2}),
			orders, []string{"2 event ids for sequence 2"}},
		{"an order's events out of sequence order", []ev{clean[2], clean[0], clean[1], clean[3], clean[4], clean[5]}, clean, orders,
			[]string{"first read in the sequence order [2 1]"}},
		{"an event of an order the database does not hold", append(append([]ev{}, clean...), ev{"e9", "o9", "order.created", 1}),
			append(append([]ev{}, clean...), ev{"e9", "o9", "order.created", 1}), orders, []string{"does not hold"}},
		{"the last event is not the final status", clean, clean, []orderRow{{ID: "o1", Status: "expired", Events: 2}, orders[1], orders[2]},
			[]string{"its last event is order.paid"}},
	} {
		got := checkEvents(read(c.stream, c.outbox), c.orders)
		if len(got) != len(c.wants) {
			t.Errorf("%s: %d violations %v, want %d: %q", c.name, len(got), got, len(c.wants), c.wants)
			continue
		}
		for i, w := range c.wants {
			if !strings.Contains(got[i].what, w) {
				t.Errorf("%s: violation %d is %q, want one saying %q", c.name, i, got[i].what, w)
			}
		}
	}
}

// An expiry that commits after the orders were read moves them: finish reads
// again until two reads agree, or the expiry's event would read as past the
// order's committed changes (campaign seed 217478).
func TestSameChangesSeesAnExpiryThatLanded(t *testing.T) {
	before := []orderRow{{ID: "a", Events: 1}, {ID: "b", Events: 2}}
	if !sameChanges(before, []orderRow{{ID: "b", Events: 2}, {ID: "a", Events: 1}}) {
		t.Fatal("the same changes read in another order count as moved")
	}
	for name, after := range map[string][]orderRow{
		"an expiry":   {{ID: "a", Events: 2}, {ID: "b", Events: 2}},
		"a new order": {{ID: "a", Events: 1}, {ID: "b", Events: 2}, {ID: "c", Events: 1}},
		"another id":  {{ID: "a", Events: 1}, {ID: "c", Events: 2}},
	} {
		if sameChanges(before, after) {
			t.Errorf("%s: not seen as moved", name)
		}
	}
	ev := eventsRead{
		stream: map[string]streamEvent{"e1": {order: "a", sequence: 1, typ: "order.created"}, "e2": {order: "a", sequence: 2, typ: "order.expired"}},
		orders: map[string][]string{"a": {"e1", "e2"}},
		outbox: []outboxRow{{id: "e1", order: "a", typ: "order.created", sequence: 1, sent: true}, {id: "e2", order: "a", typ: "order.expired", sequence: 2, sent: true}},
	}
	got := checkEvents(ev, []orderRow{{ID: "a", Status: "created", Events: 1}})
	if len(got) == 0 {
		t.Fatal("an expiry's event against the order read before it: no violation, so the stale read would pass unseen")
	}
}
