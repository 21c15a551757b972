package e2e_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Two instances sell one priced activity with payments on, and each order
// takes one of the four ways an order goes: paid; paid a cent short, so
// refund_required, then marked refunded by an operator; cancelled by its
// buyer; left unpaid until it expires. Once every order is settled and the
// relays have drained the outbox, the events in the Redis stream, deduped
// by id, are each order's status history as the database has it, in
// sequence order: created → paid; created → refund_required → refunded;
// created → expired (cancelled or lapsed).
//
// Can fail: with the refund's event insert left out of MarkRefunded
// (internal/order/admin.go), the refunded orders' histories stop at
// refund_required: "order ...: status refunded after 3 changes, the
// outbox's history [order.created order.refund_required]".
func TestEventsEqualStatusHistory(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	payStub, env := s.pricedPayments("3s")
	_, procs := startInstances(t, s, 2, s.processEnv(env))
	const total, buyers = 40, 48
	act := s.createActivity(total)

	// want is each sold order's history as the test drives it.
	want := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	users := make(chan int64)
	for range 8 {
		wg.Go(func() {
			for u := range users {
				p := procs[u%2]
				status, _, id, err := post(s.client, p.url, act, u)
				if err != nil || status != http.StatusCreated {
					continue // sold out, or refused: no order
				}
				path := s.driveOrder(payStub, p, act, u, id)
				mu.Lock()
				want[id] = path
				mu.Unlock()
			}
		})
	}
	for u := int64(1); u <= buyers; u++ {
		users <- u
	}
	close(users)
	wg.Wait()
	// Cancelled, expired and short-paid orders give their units back, so
	// more buyers than the stock may buy; at least the stock is sold.
	if len(want) < total {
		t.Fatalf("%d orders sold, want at least %d", len(want), total)
	}

	// The unpaid and short-paid orders settle at their pay_by (3 s); then
	// an operator marks the short-paid ones refunded.
	s.waitSettled(act, time.Minute)
	for id, path := range want {
		if path[len(path)-1] == seckill.OrderStatusRefunded {
			r := s.do("POST", "/admin/v1/orders/"+id+"/refund", map[string]any{"by": "e2e-operator"}, admin())
			if r.status != http.StatusOK {
				t.Fatalf("mark order %s refunded: %d %s", id, r.status, r.raw)
			}
		}
	}
	waitEventsSent(t, s.db, act, time.Minute)
	got, entries := streamEvents(t, s.rdb, s.prefix+"events", act)
	history := checkEventHistory(t, s.db, act, got)
	for id, path := range want {
		if h := history[id]; !slices.Equal(h, eventTypes(path)) {
			t.Errorf("order %s: the database's history %v, the test drove it %v", id, h, eventTypes(path))
		}
	}
	t.Logf("%d orders, %d stream entries; histories %v", len(want), entries, pathCounts(history))
}

// driveOrder sends order id of user u, bought on p, one of four ways by u,
// and returns the statuses it is to go through.
func (s *stack) driveOrder(stub *payment.Stub, p *process, act, u int64, id string) []string {
	s.t.Helper()
	created := seckill.OrderStatusCreated
	switch u % 4 {
	case 0:
		stub.SetPayment(id, payment.PaymentPaid)
		return []string{created, seckill.OrderStatusPaid}
	case 1:
		if err := stub.SetPaymentAs(id, payment.StubPayment{Status: payment.PaymentPaid, Wrong: payment.WrongAmount}); err != nil {
			s.t.Error(err)
		}
		return []string{created, seckill.OrderStatusRefundRequired, seckill.OrderStatusRefunded}
	case 2:
		c := *s
		c.url = p.url
		if r := c.do("POST", fmt.Sprintf("/api/v1/activities/%d/orders/mine/cancel", act), nil, buyer(u)); r.status != http.StatusOK {
			s.t.Errorf("user %d cancels order %s: %d %s", u, id, r.status, r.raw)
		}
	}
	return []string{created, seckill.OrderStatusExpired}
}

// waitSettled waits until no order of the activity is created any more.
func (s *stack) waitSettled(act int64, within time.Duration) {
	s.t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		var open int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ? AND status = 'created'", act).Scan(&open); err != nil {
			s.t.Fatal(err)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d orders still created after %v", open, within)
		}
	}
}

// pendingEventsOf counts an activity's events no sink acknowledged: unsent
// rows (sent_at 1970-01-01 00:00:00, or NULL), and rows batched (00:00:01)
// in a batch not sent yet (docs/DEPLOY.md, "Unsent in SQL").
const pendingEventsOf = `SELECT COUNT(*) FROM order_events e WHERE activity_id = ? AND (sent_at IS NULL
OR sent_at = '1970-01-01 00:00:00' OR (sent_at = '1970-01-01 00:00:01'
AND EXISTS (SELECT 1 FROM order_event_batches b WHERE b.id = e.batch AND b.sent_at = '1970-01-01 00:00:00')))`

// waitEventsSent waits until every outbox row of the activity is marked
// sent: the relays drained its backlog.
func waitEventsSent(t *testing.T, db *sql.DB, act int64, within time.Duration) {
	t.Helper()
	var pending int64
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		err := db.QueryRow(pendingEventsOf, act).Scan(&pending)
		if err == nil && pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events of activity %d still pending after %v (%v)", pending, act, within, err)
		}
	}
}

// streamEvents reads the activity's events from the stream, deduped by
// id, each order's in the stream's order, and the stream's length.
func streamEvents(t *testing.T, rdb redis.UniversalClient, stream string, act int64) (map[string][]seckill.OrderEvent, int) {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatalf("read the stream %s: %v", stream, err)
	}
	got := map[string][]seckill.OrderEvent{}
	seen := map[string]bool{}
	for _, m := range msgs {
		raw, _ := m.Values["event"].(string)
		var ev seckill.OrderEvent
		if err := json.Unmarshal([]byte(raw), &ev); err != nil {
			t.Fatalf("stream entry %s: %v", m.ID, err)
		}
		if ev.Data.ActivityID != act || seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		got[ev.Subject] = append(got[ev.Subject], ev)
	}
	return got, len(msgs)
}

// checkEventHistory holds the events a sink delivered (got: by order,
// deduped, in the sink's order) to the database: for each order of the
// activity, its events are the outbox's rows of it (same ids and types),
// in sequence order 1, 2, ..., as many as the order's event_sequence, the
// first order.created and the last its status now; no event of an order
// the database does not have. It returns each order's history, the event
// types in sequence order.
func checkEventHistory(t *testing.T, db *sql.DB, act int64, got map[string][]seckill.OrderEvent) map[string][]string {
	t.Helper()
	type row struct {
		status string
		seq    int64
	}
	orders := map[string]row{}
	rows, err := db.Query("SELECT id, status, event_sequence FROM orders WHERE activity_id = ?", act)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var r row
		if err := rows.Scan(&id, &r.status, &r.seq); err != nil {
			t.Fatal(err)
		}
		orders[id] = r
	}
	if err := rowsDone(rows); err != nil {
		t.Fatal(err)
	}
	outbox := outboxRows(t, db, act)
	history := map[string][]string{}
	for id, o := range orders {
		var ids, types []string
		for _, ev := range got[id] {
			if ev.Sequence != int64(len(types)+1) {
				t.Errorf("order %s: event %s with sequence %d where %d was due", id, ev.Type, ev.Sequence, len(types)+1)
			}
			ids, types = append(ids, ev.ID), append(types, ev.Type)
		}
		history[id] = types
		want := outbox[id]
		if !slices.Equal(ids, want.ids) || !slices.Equal(types, want.types) {
			t.Errorf("order %s: events %v, the outbox's %v", id, types, want.types)
		}
		if int64(len(want.types)) != o.seq || len(want.types) == 0 || want.types[0] != seckill.OrderEventType(seckill.OrderStatusCreated) ||
			want.types[len(want.types)-1] != seckill.OrderEventType(o.status) {
			t.Errorf("order %s: status %s after %d changes, the outbox's history %v", id, o.status, o.seq, want.types)
		}
	}
	for id := range got {
		if _, ok := orders[id]; !ok {
			t.Errorf("events of order %s, which the database does not have", id)
		}
	}
	if len(orders) == 0 {
		t.Error("no order in the database")
	}
	return history
}

// outboxHistory is one order's outbox rows in sequence order.
type outboxHistory struct{ ids, types []string }

func outboxRows(t *testing.T, db *sql.DB, act int64) map[string]outboxHistory {
	t.Helper()
	rows, err := db.Query("SELECT aggregateid, id, type FROM order_events WHERE activity_id = ? ORDER BY aggregateid, sequence", act)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]outboxHistory{}
	for rows.Next() {
		var order, id, typ string
		if err := rows.Scan(&order, &id, &typ); err != nil {
			t.Fatal(err)
		}
		h := out[order]
		h.ids, h.types = append(h.ids, id), append(h.types, typ)
		out[order] = h
	}
	if err := rowsDone(rows); err != nil {
		t.Fatal(err)
	}
	return out
}

// rowsDone closes rows and returns what ended their iteration.
func rowsDone(rows *sql.Rows) error {
	err := rows.Err()
	_ = rows.Close()
	return err
}

// eventTypes are the event types of a path of statuses.
func eventTypes(path []string) []string {
	out := make([]string, len(path))
	for i, st := range path {
		out[i] = seckill.OrderEventType(st)
	}
	return out
}

// pathCounts counts the orders of each history, for the log.
func pathCounts(history map[string][]string) map[string]int {
	out := map[string]int{}
	for _, h := range history {
		out[strings.Join(h, "→")]++
	}
	return out
}
