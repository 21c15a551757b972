package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/outbox"
)

// The group commit hands its created events to the relay, which sends them
// without a claim: with the claims an hour apart, every event still arrives.
//
// Can fail: without the group commit's hand-over after COMMIT (handoff.go's
// give), the rows, leased to the relay at their insert, wait for the claim
// an hour away.
func TestHandedOffEventsGoWithoutAClaim(t *testing.T) {
	w := newWorld(t)
	r := outbox.Start(w.store.Outbox, w.sink, outbox.Config{Poll: time.Hour})
	defer r.Close()
	w.store.Outbox.HandOffEvents(r.Handoff())
	defer w.store.Outbox.HandOffEvents(nil)
	for first := int64(1); first <= 40; first += 10 {
		orders := make([]seckill.Order, 10)
		for i := range orders {
			orders[i] = seckill.Order{UserID: first + int64(i)}
		}
		if _, err := w.store.Orders.CreateOrders(context.Background(), w.act.ID, first, orders); err != nil {
			t.Fatal(err)
		}
	}
	waitPending(t, w.store, 0)
	w.check(t)
	// Sent in batches, they go with their batches at the retention.
	if n, err := w.store.Outbox.DeleteEvents(context.Background(), time.Now().Add(time.Hour), false, 1000); err != nil || n != 40 {
		t.Fatalf("the retention deleted %d of 40 sent events (%v)", n, err)
	}
}

// Created events inserted as a batch leased to a relay that never takes it
// (it died after the COMMIT, or its queue was full) are given back and
// claimed by another once the lease lapses, and not before: nothing is lost, and no row is sent by two
// relays at once.
//
// Can fail: a batch inserted without the lease is given back and its events
// claimed at once (the stream's check); so are the changes' events when the
// claim does not hold them back behind their order's batched created event
// (claimable's inUnsentBatch). A retention that took the batch's sentinel
// for a send deletes them (the first check).
func TestEventsNotTakenWaitForTheirLease(t *testing.T) {
	w := newWorld(t)
	w.store.Outbox.HandOffEvents(&order.Handoff{Owner: "dead-relay-h", Lease: 1500 * time.Millisecond,
		Take: func(order.EventBatch) bool { return false }})
	defer w.store.Outbox.HandOffEvents(nil)
	w.sell(t, 9) // created events leased to the dead relay; the changes' events not
	ctx := context.Background()
	if n, err := w.store.Outbox.DeleteEvents(ctx, time.Now().Add(time.Hour), false, 1000); err != nil || n != 0 {
		t.Fatalf("the retention deleted %d unsent events (%v), want 0", n, err)
	}
	if n, _, err := w.store.Outbox.PendingEvents(ctx); err != nil || n < 18 {
		t.Fatalf("pending events: %d (%v), want the 9 created and their changes'", n, err)
	}
	start := time.Now()
	other := outbox.Start(w.store.Outbox, w.sink, outbox.Config{Poll: 10 * time.Millisecond})
	defer other.Close()
	time.Sleep(500 * time.Millisecond)
	if n, _ := w.rdb.XLen(ctx, w.stream).Result(); n != 0 && time.Since(start) < 1500*time.Millisecond {
		t.Fatalf("%d events sent while the dead relay's lease ran", n)
	}
	waitPending(t, w.store, 0)
	w.check(t)
}
