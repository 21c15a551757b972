package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/outbox"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// world is a real MariaDB order store and a Redis stream sink on real Redis.
type world struct {
	store  *order.Store
	rdb    *redis.Client
	stream string
	sink   *outbox.RedisSink
	act    seckill.Activity
	dsn    string // the store's database
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dsn := testenv.MySQLDSN(t)
	s, err := order.Open(context.Background(), dsn, order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	rdb := testenv.Redis(t)
	stream := testenv.Prefix(t) + "events"
	t.Cleanup(func() { rdb.Del(context.Background(), stream) })
	start := time.Now().UTC().Truncate(time.Second)
	a, err := s.Activities.CreateActivity(context.Background(), seckill.Activity{Name: "events", TotalStock: 100, StartsAt: start, EndsAt: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return &world{store: s, rdb: rdb, stream: stream, sink: outbox.NewRedisSink(rdb, stream, 100000, 0, 0), act: a, dsn: dsn}
}

// sell writes n orders and moves them along: every third paid, every third
// expired and then paid late, the rest left created. Each order has one to
// three events.
func (w *world) sell(t *testing.T, n int) {
	t.Helper()
	w.sellTo(t, 1, n)
}

// sellTo is sell to the buyers first, first+1, ...: a second sale of the
// same activity needs buyers of its own, and a newer fence (first serves:
// each sale's first buyer is above the last sale's).
func (w *world) sellTo(t *testing.T, first int64, n int) {
	t.Helper()
	ctx := context.Background()
	orders := make([]seckill.Order, n)
	for i := range orders {
		orders[i] = seckill.Order{UserID: first + int64(i)}
	}
	b, err := w.store.Orders.CreateOrders(ctx, w.act.ID, first, orders)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range b.Written {
		change := func(from, to, reason string, fence int64) {
			err := w.store.Orders.ChangeStatus(ctx, order.StatusChange{OrderID: o.ID, ActivityID: o.ActivityID, From: from, To: to,
				PaidAt: time.Now(), RefundReason: reason, Fence: fence})
			if err != nil {
				t.Fatal(err)
			}
		}
		switch i % 3 {
		case 0:
			change(seckill.OrderStatusCreated, seckill.OrderStatusPaid, "", 1)
		case 1:
			change(seckill.OrderStatusCreated, seckill.OrderStatusExpired, "", 1)
			change(seckill.OrderStatusExpired, seckill.OrderStatusRefundRequired, seckill.RefundPaidLate, 2)
		}
	}
}

// check holds the stream to the outbox: after dedupe by id, each order's
// events are the outbox's rows of it (the committed changes), in sequence
// order, and nothing is pending.
func (w *world) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	msgs, err := w.rdb.XRange(ctx, w.stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var evs []seckill.OrderEvent
	for _, m := range msgs {
		var ev seckill.OrderEvent
		if err := json.Unmarshal([]byte(m.Values["event"].(string)), &ev); err != nil {
			t.Fatal(err)
		}
		if m.Values["id"] != ev.ID {
			t.Errorf("entry %s: id field %v, event id %s", m.ID, m.Values["id"], ev.ID)
		}
		evs = append(evs, ev)
	}
	w.checkEvents(t, evs)
}

// checkEvents holds the events a sink delivered, in its order, to the
// outbox: after dedupe by id, each order's events are the outbox's rows of
// it, in sequence order, and nothing is pending.
func (w *world) checkEvents(t *testing.T, evs []seckill.OrderEvent) {
	t.Helper()
	ctx := context.Background()
	seen := map[string]bool{}
	got := map[string][]string{}
	for _, ev := range evs {
		if seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		if want := int64(len(got[ev.Subject]) + 1); ev.Sequence != want {
			t.Errorf("order %s: event %s (sequence %d) arrived where sequence %d was due", ev.Subject, ev.Type, ev.Sequence, want)
		}
		got[ev.Subject] = append(got[ev.Subject], ev.ID)
	}
	rows, err := w.store.Outbox.EventsOf(ctx, w.act.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, r := range rows {
		want[r.OrderID] = append(want[r.OrderID], r.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events in the stream, by order:\n got %v\nwant %v", got, want)
	}
	if n, _, err := w.store.Outbox.PendingEvents(ctx); err != nil || n != 0 {
		t.Errorf("pending after the drain: %d, %v", n, err)
	}
}

// Two relays (two instances) send while the sale goes on: every event
// arrives, each order's in sequence order.
func TestTwoRelaysDeliverEveryEventInOrder(t *testing.T) {
	w := newWorld(t)
	cfg := outbox.Config{Poll: 10 * time.Millisecond, Batch: 7}
	r1, r2 := outbox.Start(w.store.Outbox, w.sink, cfg), outbox.Start(w.store.Outbox, w.sink, cfg)
	w.sell(t, 30)
	waitPending(t, w.store, 0)
	_ = r1.Close()
	_ = r2.Close()
	w.check(t)
}

func waitPending(t *testing.T, s *order.Store, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, _, err := s.Outbox.PendingEvents(context.Background())
		if err == nil && n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending events: %d (%v), want %d", n, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A relay that claims a batch and dies before sending it (SIGKILL mid-send)
// loses nothing: its lease lapses and another relay sends the rows; until
// then the orders' later events wait behind them, so order holds too.
//
// Can fail: without the claim's NOT EXISTS guard, the live relay sends the
// orders' second events before their first; with rows marked sent at the
// claim instead of after the sink's answer, the dead relay's rows are lost.
func TestRelayDeadMidSendLosesNothing(t *testing.T) {
	w := newWorld(t)
	w.sell(t, 12)
	ctx := context.Background()
	dead, err := w.store.Outbox.ClaimEvents(ctx, "dead-relay", time.Now(), time.Second, 5)
	if err != nil || len(dead) != 5 {
		t.Fatalf("the dead relay's claim: %d events, %v", len(dead), err)
	}
	live := outbox.Start(w.store.Outbox, w.sink, outbox.Config{Poll: 10 * time.Millisecond, Lease: time.Second})
	defer live.Close()
	waitPending(t, w.store, 0)
	w.check(t)
}

// flakySink is a sink that can be down: Send then fails, sending nothing.
type flakySink struct {
	outbox.Sink
	down  atomic.Bool
	tried atomic.Int64
}

func (f *flakySink) Send(ctx context.Context, events []order.Event) error {
	f.tried.Add(1)
	if f.down.Load() {
		return errors.New("sink down")
	}
	return f.Sink.Send(ctx, events)
}

// The sink down mid-sale: the events wait (pending, none lost), and once
// it is back the backlog drains.
//
// Can fail: a relay that marks rows sent whatever Send answered loses the
// events sent while the sink was down.
func TestSinkDownThenBackLosesNothing(t *testing.T) {
	w := newWorld(t)
	sink := &flakySink{Sink: w.sink}
	sink.down.Store(true)
	r := outbox.Start(w.store.Outbox, sink, outbox.Config{Poll: 10 * time.Millisecond})
	defer r.Close()
	w.sell(t, 15)
	for sink.tried.Load() < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	n, oldest, err := w.store.Outbox.PendingEvents(context.Background())
	if err != nil || n < 15 || oldest.IsZero() {
		t.Fatalf("pending with the sink down: %d since %v (%v); want every event", n, oldest, err)
	}
	sink.down.Store(false)
	waitPending(t, w.store, 0)
	w.check(t)
}
