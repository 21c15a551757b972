package e2e_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// Three instances sell one activity and relay its events to the Redis
// stream; one is SIGKILLed mid-sale, its relay possibly mid-send. Nothing is
// lost: once the dead relay's leases lapse the others send its rows, and
// after dedupe by id the stream holds exactly the outbox's events, one
// order.created per order sold, each order's in sequence order.
func TestEventsSurviveSIGKILL(t *testing.T) {
	s, instances, procs := threeInstances(t)
	const total = 60
	act := s.createActivity(total)
	// 300 buyers over 20 workers, round robin over the instances; the
	// third is killed once a third of the buyers have tried, and its share
	// goes to the second. A request in flight at the kill fails; its buyer
	// does not retry (the order may or may not exist: the database says).
	var next, killed atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for u := next.Add(1); u <= 300; u = next.Add(1) {
				i := u % 3
				if u > 100 && killed.CompareAndSwap(0, 1) {
					procs[2].signal(syscall.SIGKILL)
				}
				if i == 2 && killed.Load() == 1 {
					i = 1
				}
				_, _, _, _ = post(s.client, instances[i].url, act, u)
			}
		})
	}
	wg.Wait()

	// The dead relay's leases lapse after 30 s; the live ones then send.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var pending int64
		if err := s.db.QueryRow(pendingEventsOf, act).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending after 90 s", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
	msgs, err := s.rdb.XRange(context.Background(), s.prefix+"events", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{} // order id -> sequences, deduped
	seen := map[string]bool{}
	for _, m := range msgs {
		var ev seckill.OrderEvent
		if err := json.Unmarshal([]byte(m.Values["event"].(string)), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Data.ActivityID != act || seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		got[ev.Subject] = append(got[ev.Subject], ev.Sequence)
	}
	rows, err := s.db.Query("SELECT id FROM orders WHERE activity_id = ?", act)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	orders := 0
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		orders++
		if seqs := got[id]; len(seqs) != 1 || seqs[0] != 1 {
			t.Errorf("order %s: events with sequences %v in the stream, want [1]", id, seqs)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if orders != len(got) || orders == 0 {
		t.Errorf("%d orders in the database, events of %d orders", orders, len(got))
	}
	t.Logf("%d orders, %d stream entries (%d after dedupe)", orders, len(msgs), len(seen))
}
