package outbox

import (
	"context"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
)

// The relay's side of the handoff (internal/order handoff.go): the group
// commit inserts its created events leased to this relay and hands them over
// after COMMIT, so the common case costs one statement (the mark) where a
// claim costs four (pick, lease, read, mark). Rows not handed over, or not
// sent in time, are claimed by any relay once their lease lapses.

// handedBuffer is how many committed groups may wait for the relay; past it
// the group commit does not wait: their rows wait for their lease.
const handedBuffer = 1024

// handedLinger is how long the relay gathers the groups committed after
// one, to send them in one call and mark them in one statement: at a few
// thousand orders a second groups come every few milliseconds, and each send
// and mark costs Redis and the database a round trip whatever its size.
const handedLinger = 20 * time.Millisecond

// handedBatch is one committed group's created events and when their lease
// ends.
type handedBatch struct {
	events []order.Event
	until  time.Time
}

// Handoff is what the order store needs to hand this relay its committed
// created events; nil without a sink (the rows stay for change data capture).
func (r *Relay) Handoff() *order.Handoff {
	if r.sink == nil {
		return nil
	}
	return &order.Handoff{Owner: r.handoffOwner(), Lease: r.cfg.Lease, Take: r.take}
}

func (r *Relay) handoffOwner() string { return r.id + "-h" }

// take queues a committed group's events without blocking the group commit.
func (r *Relay) take(events []order.Event) bool {
	select {
	case r.handed <- handedBatch{events: events, until: time.Now().Add(r.cfg.Lease)}:
		return true
	default:
		return false
	}
}

// sendHanded sends b and the groups committed within handedLinger of it, up
// to a batch, and
// marks them sent. Events whose lease would end before their send could
// are left to be claimed: another relay may send them then. On a failed
// send their lease is given up, so a claim sends them at once.
func (r *Relay) sendHanded(ctx context.Context, b handedBatch) {
	events := r.inTime(nil, b)
	linger := time.NewTimer(handedLinger)
	defer linger.Stop()
	for gathering := true; gathering && len(events) < r.cfg.Batch; {
		select {
		case more := <-r.handed:
			events = r.inTime(events, more)
		case <-linger.C:
			gathering = false
		case <-ctx.Done():
			gathering = false
		}
	}
	if len(events) == 0 {
		return
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	sendCtx, cancel := context.WithTimeout(ctx, r.cfg.SendTimeout)
	err := r.sink.Send(sendCtx, events)
	cancel()
	// With contexts of their own: the sink has the events (or not), and a
	// relay stopping now should neither send them twice nor hold them.
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err != nil {
		r.cfg.Metrics.sendFailed()
		r.cfg.Log.Warn("events: handed-off events not sent; a claim sends them", "events", len(events), "err", err)
		if err := r.store.ReleaseEvents(markCtx, r.handoffOwner(), ids); err != nil {
			r.cfg.Log.Warn("events: handed-off events not released; they wait for their lease", "err", err)
		}
		return
	}
	if err := r.store.MarkEventsSent(markCtx, ids, time.Now()); err != nil {
		r.cfg.Log.Warn("events: sent events not marked sent; they are sent again", "err", err)
		return
	}
	r.cfg.Metrics.sent(len(events))
}

// inTime appends b's events to events when their lease leaves a whole send
// timeout to send them in.
func (r *Relay) inTime(events []order.Event, b handedBatch) []order.Event {
	if time.Until(b.until) < r.cfg.SendTimeout {
		return events
	}
	return append(events, b.events...)
}

// releaseHanded gives up the lease of the events handed over and not sent,
// once the relay stopped, so another relay need not wait for it.
func (r *Relay) releaseHanded() {
	var ids []string
	for {
		select {
		case b := <-r.handed:
			for _, e := range b.events {
				ids = append(ids, e.ID)
			}
			continue
		default:
		}
		break
	}
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.store.ReleaseEvents(ctx, r.handoffOwner(), ids); err != nil {
		r.cfg.Log.Warn("events: handed-off events not released at close; they wait for their lease", "err", err)
	}
}
