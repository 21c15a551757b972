package outbox

import (
	"context"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
)

// The relay's side of the handoff (internal/order handoff.go): the group
// commit inserts its created events as one batch leased to this relay and
// hands it over after COMMIT, so the common case costs one statement (the
// batches' mark) for the groups of a send, where a claim costs four (pick,
// lease, read, mark). Batches not handed over, or not sent in time, are
// given back once their lease lapses, and their events claimed by any relay.

// handedBuffer is how many committed groups may wait for the relay; past it
// the group commit does not wait: their rows wait for their lease.
const handedBuffer = 1024

// handedLinger is how long the relay gathers the groups committed after
// one, to send them in one call and mark them in one statement: at a few
// thousand orders a second groups come every few milliseconds, and each send
// and mark costs Redis and the database a round trip whatever its size.
const handedLinger = 20 * time.Millisecond

// handedBatch is one committed group's batch and when its lease ends.
type handedBatch struct {
	order.EventBatch
	until time.Time
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

// take queues a committed group's batch without blocking the group commit.
func (r *Relay) take(b order.EventBatch) bool {
	select {
	case r.handed <- handedBatch{EventBatch: b, until: time.Now().Add(r.cfg.Lease)}:
		return true
	default:
		return false
	}
}

// sendHanded sends b and the groups committed within handedLinger of it, up
// to a batch of events, and marks their batches sent. Batches whose lease
// would end before their send could are left to be given back: another
// relay may send them then. On a failed send they are given back at once,
// so a claim sends their events.
func (r *Relay) sendHanded(ctx context.Context, b handedBatch) {
	var ids []int64
	events := r.inTime(nil, &ids, b)
	linger := time.NewTimer(handedLinger)
	defer linger.Stop()
	for gathering := true; gathering && len(events) < r.cfg.Batch; {
		select {
		case more := <-r.handed:
			events = r.inTime(events, &ids, more)
		case <-linger.C:
			gathering = false
		case <-ctx.Done():
			gathering = false
		}
	}
	if len(events) == 0 {
		return
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
		if err := r.store.ReleaseBatches(markCtx, r.handoffOwner(), ids); err != nil {
			r.cfg.Log.Warn("events: handed-off events not given back; they wait for their lease", "err", err)
		}
		return
	}
	if err := r.store.MarkBatchesSent(markCtx, ids, time.Now()); err != nil {
		r.cfg.Log.Warn("events: sent events not marked sent; they are sent again", "err", err)
		return
	}
	r.cfg.Metrics.sent(len(events))
}

// inTime appends b's events to events, and its id to ids, when its lease
// leaves a whole send timeout to send them in.
func (r *Relay) inTime(events []order.Event, ids *[]int64, b handedBatch) []order.Event {
	if time.Until(b.until) < r.cfg.SendTimeout {
		return events
	}
	*ids = append(*ids, b.ID)
	return append(events, b.Events...)
}

// releaseHanded gives back the batches handed over and not sent, once the
// relay stopped, so another relay need not wait for their lease.
func (r *Relay) releaseHanded() {
	var ids []int64
	for {
		select {
		case b := <-r.handed:
			ids = append(ids, b.ID)
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
	if err := r.store.ReleaseBatches(ctx, r.handoffOwner(), ids); err != nil {
		r.cfg.Log.Warn("events: handed-off events not given back at close; they wait for their lease", "err", err)
	}
}
