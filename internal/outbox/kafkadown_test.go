package outbox_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/outbox"
)

// kafkaDown is how long the broker stays stopped: the issue's "sink down
// for 10 s mid-sale".
const kafkaDown = 10 * time.Second

// The Kafka sink down for 10 s mid-sale, twice, against kfake (franz-go's
// in-process cluster: no Kafka broker installs here): first the topic's
// partitions refuse every produce (NOT_ENOUGH_REPLICAS, as when the
// in-sync replicas acks=all needs are gone), then the broker is stopped and
// started again on the same port with the same log (a data directory).
// Each time the sale goes on, its events wait in the outbox (pending,
// nothing marked sent), and once the sink is back the backlog drains: the
// topic holds every event of the outbox, each order's in sequence order,
// duplicates aside.
//
// A stopped broker mostly holds the relay's send in flight (franz-go's
// idempotent producer cannot give up a request issued without an answer),
// so the first outage is the one where sends fail and the relay's guard
// is what keeps the events.
//
// Can fail: a relay that marks rows sent whatever the sink answered loses
// the events of the first outage: "pending with the partitions refusing
// produce: 0".
func TestKafkaBrokerDownThenBack(t *testing.T) {
	const topic = "seckill.orders"
	dir, port := t.TempDir(), freePort(t)
	start := func() *kfake.Cluster {
		t.Helper()
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(dir), kfake.SeedTopics(3, topic))
		if err != nil {
			t.Fatalf("start the broker on port %d: %v", port, err)
		}
		return c
	}
	broker := start()
	t.Cleanup(func() { broker.Close() }) // the one running at the end
	sink, err := outbox.NewKafkaSink(broker.ListenAddrs(), topic)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	// A send to a stopped broker gives up after a second and is tried again
	// (the relay backs off up to 2 s): the outage is what is measured, not
	// the client's patience.
	r := outbox.Start(w.store.Outbox, sink, outbox.Config{Poll: 10 * time.Millisecond, SendTimeout: time.Second})
	relayOpen := true
	defer func() {
		if relayOpen {
			_ = r.Close()
		}
	}()
	w.sellTo(t, 1, 9)
	waitPending(t, w.store, 0)
	// outage sells 9 more orders while the sink is down for kafkaDown, checks
	// that their events wait, brings the sink back and waits for the drain.
	var waited []int64
	outage := func(what string, first int64, down, up func()) {
		t.Helper()
		down()
		w.sellTo(t, first, 9)
		time.Sleep(kafkaDown)
		n, _, err := w.store.Outbox.PendingEvents(context.Background())
		if err != nil || n < 9 {
			up()
			t.Fatalf("pending with %s: %d (%v), want at least the 9 orders' events", what, n, err)
		}
		waited = append(waited, n)
		up()
		waitPendingWithin(t, w.store, 0, 90*time.Second)
	}
	var refuse *kfake.FaultHandle
	outage("the partitions refusing produce", 1000, func() {
		refuse = broker.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotEnoughReplicas, Count: -1})
	}, func() { refuse.Remove() })
	outage("the broker stopped", 2000, broker.Close, func() { broker = start() })
	_ = r.Close() // closes the sink
	relayOpen = false

	rows, err := w.store.Outbox.EventsOf(context.Background(), w.act.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs := consumeAll(t, broker.ListenAddrs(), topic, len(rows))
	w.checkEvents(t, evs)
	t.Logf("%d events in the outbox, %d records in the topic (pending at the end of each outage: %v)", len(rows), len(evs), waited)
}

// consumeAll reads the topic from its start until it has read at least
// want records and the topic has nothing more for a second: records, in
// each partition's order. opts come after the consumer's own.
func consumeAll(t *testing.T, brokers []string, topic string, want int, opts ...kgo.Opt) []seckill.OrderEvent {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var evs []seckill.OrderEvent
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fetches := cl.PollFetches(ctx)
		cancel()
		before := len(evs)
		fetches.EachRecord(func(rec *kgo.Record) {
			var ev seckill.OrderEvent
			if err := json.Unmarshal(rec.Value, &ev); err != nil {
				t.Fatal(err)
			}
			if string(rec.Key) != ev.Subject {
				t.Errorf("record key %q, event of order %s", rec.Key, ev.Subject)
			}
			evs = append(evs, ev)
		})
		if len(evs) >= want && len(evs) == before {
			return evs
		}
	}
	t.Fatalf("%d records read in 30 s, want at least %d", len(evs), want)
	return nil
}

// waitPendingWithin is waitPending with a deadline of the caller's.
func waitPendingWithin(t *testing.T, s *order.Store, want int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, _, err := s.Outbox.PendingEvents(context.Background())
		if err == nil && n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending events: %d (%v) after %v, want %d", n, err, within, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
