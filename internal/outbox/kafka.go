package outbox

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seckill-oss/seckill/internal/order"
)

// KafkaSink produces events to a Kafka topic with franz-go: the order id is
// the record key (so one order's events share a partition and keep their
// order there), the value the CloudEvents envelope; the producer is
// idempotent and waits for all in-sync replicas.
type KafkaSink struct {
	cl    *kgo.Client
	topic string
}

// NewKafkaSink connects a producer to brokers for topic. Extra options come
// after the sink's own (KafkaSecurity.Opts, tests).
func NewKafkaSink(brokers []string, topic string, opts ...kgo.Opt) (*KafkaSink, error) {
	all := append([]kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Idempotence is franz-go's default with acks=all; with it, retries
		// neither duplicate nor reorder a partition's records.
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("outbox: kafka client: %w", err)
	}
	return &KafkaSink{cl: cl, topic: topic}, nil
}

// Send produces the events and returns once every one is acknowledged.
func (s *KafkaSink) Send(ctx context.Context, events []order.Event) error {
	recs := make([]*kgo.Record, len(events))
	for i, e := range events {
		recs[i] = &kgo.Record{
			Topic: s.topic, Key: []byte(e.OrderID), Value: e.Payload,
			Headers: []kgo.RecordHeader{{Key: "ce_id", Value: []byte(e.ID)}, {Key: "content-type", Value: []byte("application/cloudevents+json")}},
		}
	}
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("outbox: produce %d events to %s: %w", len(events), s.topic, err)
	}
	return nil
}

// Close flushes nothing (Send waits for its records) and closes the client.
func (s *KafkaSink) Close() error {
	s.cl.Close()
	return nil
}
