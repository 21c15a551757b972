package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/outbox"
)

// Order events (docs/API.md "Order events"): which sink the relay sends
// the outbox's rows to.
const (
	eventsRedis = "redis"
	eventsKafka = "kafka"
	eventsOff   = "off"
)

// defaultEventsTopic is SECKILL_EVENTS_KAFKA_TOPIC's default.
const defaultEventsTopic = "seckill.orders"

// eventsConfig is the order events' part of the configuration.
type eventsConfig struct {
	Sink         string   // eventsRedis, eventsKafka or eventsOff
	Stream       string   // the Redis stream
	KafkaBrokers []string // with eventsKafka
	KafkaTopic   string
}

// eventSink is the configured sink, nil with SECKILL_EVENTS=off.
func eventSink(cfg config, b *backend) (outbox.Sink, error) {
	switch cfg.Events.Sink {
	case eventsOff:
		return nil, nil
	case eventsKafka:
		return outbox.NewKafkaSink(cfg.Events.KafkaBrokers, cfg.Events.KafkaTopic)
	}
	return outbox.NewRedisSink(b.rdb, cfg.Events.Stream, int64(cfg.EventsStreamMaxLen), cfg.WaitReplicas, cfg.WaitTimeout), nil
}

// startRelay starts this instance's relay of order events; the caller
// closes it before the stores.
func startRelay(cfg config, b *backend, log *slog.Logger, reg prometheus.Registerer) (*outbox.Relay, error) {
	sink, err := eventSink(cfg, b)
	if err != nil {
		return nil, err
	}
	log.Info("order events", "sink", cfg.Events.Sink, "retention", cfg.EventsRetention.String())
	relay := outbox.Start(b.orders, sink, outbox.Config{
		Retention: cfg.EventsRetention, Log: log.With("component", "events"), Metrics: outbox.NewMetrics(reg, log),
	})
	b.orders.HandOffEvents(relay.Handoff())
	return relay, nil
}

// closeRelay stops the relay; groups committed from then on leave their
// events to a claim.
func closeRelay(b *backend, relay *outbox.Relay) {
	b.orders.HandOffEvents(nil)
	_ = relay.Close()
}

// printEventsDemo shows the demo's user how to see its events.
func printEventsDemo(stdout io.Writer, cfg config, b *backend) {
	if cfg.Events.Sink != eventsRedis || b.mini == nil {
		return
	}
	fmt.Fprintf(stdout, "Order events (one JSON line each): SECKILL_REDIS_URL=redis://%s seckill events tail\n\n", b.mini.Addr())
}
