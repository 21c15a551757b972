package order

import "time"

// Handoff is how this instance's relay (internal/outbox) takes the created
// events of a group the group commit just committed, straight from memory:
// the group's transaction inserts their rows already leased to Owner, so no
// other relay claims them, and after COMMIT it gives them to Take. The relay
// then sends them and marks them sent, without the claim's statements (the
// pick, the lease, the read) that cost the database more than the events'
// insert itself (loadtest/RESULTS.md, order events). Rows not taken (Take
// refused them, COMMIT's outcome was unknown, the instance died) wait for
// their lease to lapse and are claimed as any others. Only created events,
// an order's first, are handed off: an order's later events go by the claim,
// which holds them back until the earlier ones are sent.
type Handoff struct {
	Owner string        // the lease owner written on the rows
	Lease time.Duration // how long the rows stay leased to Owner
	// Take is given the events of each committed group; false: not taken.
	// It must not block.
	Take func(events []Event) bool
}

// HandOffEvents sets (nil: removes) the relay that takes the created events of
// the groups this Store commits.
func (s *Store) HandOffEvents(h *Handoff) { s.handoff.Store(h) }

// leasedTo leases rows to the handoff's owner from at.
func (h *Handoff) leasedTo(rows []eventRow, at time.Time) {
	if h == nil {
		return
	}
	until := at.Add(h.Lease)
	for i := range rows {
		rows[i].LeaseOwner, rows[i].LeaseUntil = &h.Owner, &until
	}
}

// give hands the committed rows to the relay.
func (h *Handoff) give(rows []eventRow) {
	if h == nil || len(rows) == 0 {
		return
	}
	events := make([]Event, len(rows))
	for i, r := range rows {
		events[i] = r.event()
	}
	h.Take(events)
}
