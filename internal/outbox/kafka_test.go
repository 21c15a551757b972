package outbox_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/outbox"
)

// The Kafka sink against kfake, franz-go's in-process cluster that speaks
// the Kafka protocol (no Kafka broker installs on these machines): every
// event arrives keyed by its order id, one order's events in sequence
// order within their partition, and the relay drains the outbox into it.
func TestKafkaSinkKeysByOrderInOrder(t *testing.T) {
	const topic = "seckill.orders"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	sink, err := outbox.NewKafkaSink(cluster.ListenAddrs(), topic)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.sell(t, 9)
	r := outbox.Start(w.store.Outbox, sink, outbox.Config{Poll: 10 * time.Millisecond})
	waitPending(t, w.store, 0)
	_ = r.Close() // closes the sink

	rows, err := w.store.Outbox.EventsOf(context.Background(), w.act.ID)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next := map[string]int64{}
	for got := 0; got < len(rows); {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d of %d events read: %v", got, len(rows), err)
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			got++
			var ev seckill.OrderEvent
			if err := json.Unmarshal(rec.Value, &ev); err != nil {
				t.Fatal(err)
			}
			if string(rec.Key) != ev.Subject {
				t.Errorf("record key %q, event of order %s", rec.Key, ev.Subject)
			}
			if next[ev.Subject]++; ev.Sequence != next[ev.Subject] {
				t.Errorf("order %s: sequence %d arrived where %d was due", ev.Subject, ev.Sequence, next[ev.Subject])
			}
		})
	}
}
