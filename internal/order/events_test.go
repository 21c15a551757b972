package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
)

// Every committed change has its event, in the change's transaction, and a
// refused one has none: orders written by a group (two activities), then
// paid; expired, paid late and refunded; refused for a mismatch. The
// outbox then holds, order by order, exactly the status path in sequence
// order, each payload the order as the API renders it after the change.
//
// Can fail: without insertChangeEvent in ChangeStatus (or MarkRefunded),
// the paths miss their later steps; without insertCreatedEvents in the
// group, every path misses order.created.
func TestEventsFollowTheStatusHistory(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a, b := newActivity(t, s, 10), newActivity(t, s, 10)
		res := s.Orders.CreateOrderGroup(ctx, []Write{
			{ActivityID: a.ID, Fence: 1, Orders: batchOf(1, 2)},
			{ActivityID: b.ID, Fence: 1, Orders: batchOf(3)},
		})
		for i, r := range res {
			if r.Err != nil || len(r.Batch.Written) == 0 {
				t.Fatalf("write %d: %+v", i, r)
			}
		}
		paid, late, mismatch := res[0].Batch.Written[0], res[0].Batch.Written[1], res[1].Batch.Written[0]
		change := func(o seckill.Order, from, to, reason string, fence int64) error {
			return s.Orders.ChangeStatus(ctx, StatusChange{OrderID: o.ID, ActivityID: o.ActivityID, From: from, To: to,
				PaidAt: time.Now(), RefundReason: reason, Fence: fence})
		}
		steps := []error{
			change(paid, seckill.OrderStatusCreated, seckill.OrderStatusPaid, "", 1),
			change(late, seckill.OrderStatusCreated, seckill.OrderStatusExpired, "", 1),
			change(late, seckill.OrderStatusExpired, seckill.OrderStatusRefundRequired, seckill.RefundPaidLate, 2),
			change(mismatch, seckill.OrderStatusCreated, seckill.OrderStatusRefundRequired, seckill.RefundAmountMismatch, 1),
		}
		for i, err := range steps {
			if err != nil {
				t.Fatalf("change %d: %v", i, err)
			}
		}
		// Refused: no event.
		if err := change(paid, seckill.OrderStatusCreated, seckill.OrderStatusExpired, "", 5); !errors.Is(err, ErrStatusChanged) {
			t.Fatalf("a change from a status the order left: %v", err)
		}
		if _, err := s.Orders.MarkRefunded(ctx, late.ID, "ops", time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Orders.MarkRefunded(ctx, paid.ID, "ops", time.Now()); !errors.Is(err, ErrNotRefundRequired) {
			t.Fatalf("refund of a paid order: %v", err)
		}
		want := map[string][]string{
			paid.ID:     {"created", "paid"},
			late.ID:     {"created", "expired", "refund_required", "refunded"},
			mismatch.ID: {"created", "refund_required"},
		}
		got := map[string][]string{}
		for _, id := range []int64{a.ID, b.ID} {
			evs, err := s.Outbox.EventsOf(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				got[e.OrderID] = append(got[e.OrderID], checkEvent(t, s, e, len(got[e.OrderID])+1))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("events by order:\n got %v\nwant %v", got, want)
		}
	})
}

// checkEvent checks e's envelope (the sequence-th of its order) and returns
// the status it carries.
func checkEvent(t *testing.T, s *Store, e Event, sequence int) string {
	t.Helper()
	var ev seckill.OrderEvent
	if err := json.Unmarshal(e.Payload, &ev); err != nil {
		t.Fatalf("event %s: %v", e.ID, err)
	}
	switch {
	case e.Sequence != int64(sequence) || ev.Sequence != int64(sequence):
		t.Errorf("order %s: event %d has sequence %d (row %d)", e.OrderID, sequence, ev.Sequence, e.Sequence)
	case ev.ID != e.ID || ev.ID != EventID(e.OrderID, int64(sequence), eventTime(t, ev)):
		t.Errorf("event id %q, row %q, want EventID", ev.ID, e.ID)
	case ev.Type != "order."+ev.Data.Status || ev.Type != e.Type || ev.Subject != e.OrderID || ev.Data.OrderID != e.OrderID:
		t.Errorf("event %+v of row %+v", ev, e)
	case ev.SpecVersion != "1.0" || ev.Source == "" || ev.DataContentType != "application/json":
		t.Errorf("envelope %+v", ev)
	}
	if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
		t.Errorf("event time %q: %v", ev.Time, err)
	}
	return ev.Data.Status
}

// An order's event payload is the body the API answers for it: after the
// last change, the order read back renders to the last event's data.
func TestEventDataIsTheOrderBody(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "sqlite::memory:")
	a := newActivity(t, s, 10)
	o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: 7, Fence: 1})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Outbox.EventsOf(ctx, a.ID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v", evs, err)
	}
	var ev seckill.OrderEvent
	if err := json.Unmarshal(evs[0].Payload, &ev); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Orders.OrderByID(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Data != stored.Body() {
		t.Errorf("event data %+v, the order's body %+v", ev.Data, stored.Body())
	}
}

// eventTime is the envelope's time.
func eventTime(t *testing.T, ev seckill.OrderEvent) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		t.Fatalf("event %s: time %q: %v", ev.ID, ev.Time, err)
	}
	return at
}

// Event ids sort as their events' times (the outbox's primary key appends),
// are UUIDv7s, and are one per order and sequence.
func TestEventIDsFollowTime(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var last string
	seen := map[string]bool{}
	for i := range 1000 {
		at := start.Add(time.Duration(i) * 300 * time.Microsecond)
		for seq := int64(1); seq <= 2; seq++ {
			id := EventID(fmt.Sprintf("order-%d", i%7), seq, at)
			u, err := uuid.Parse(id)
			switch {
			case err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122:
				t.Fatalf("EventID %q: version %d, variant %v, %v; want a UUIDv7", id, u.Version(), u.Variant(), err)
			case seq == 1 && id <= last:
				t.Fatalf("EventID at %v is %s, not after %s of 300 µs before", at, id, last)
			case seen[id]:
				t.Fatalf("EventID %s twice", id)
			case id != EventID(fmt.Sprintf("order-%d", i%7), seq, at):
				t.Fatalf("EventID %s is not a function of its order, sequence and time", id)
			}
			seen[id], last = true, id
		}
	}
}
