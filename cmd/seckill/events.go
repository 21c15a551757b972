package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

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

// demoCommand is how the demo's user runs this program: the README starts
// the demo with `go run`, after which there is no seckill binary on the
// PATH, so a printed line naming one would fail as printed.
const demoCommand = "go run ./cmd/seckill"

// printEventsDemo shows the demo's user how to see its events: a line that
// runs as printed from the directory the demo was started in, naming the
// stream's settings that differ from their defaults.
func printEventsDemo(stdout io.Writer, cfg config, b *backend) {
	if cfg.Events.Sink != eventsRedis || b.mini == nil {
		return
	}
	env := []string{"SECKILL_REDIS_URL=redis://" + b.mini.Addr()}
	if cfg.KeyPrefix != "" {
		env = append(env, shellAssign("SECKILL_KEY_PREFIX", cfg.KeyPrefix))
	}
	if cfg.Events.Stream != cfg.KeyPrefix+"events" {
		env = append(env, shellAssign("SECKILL_EVENTS_STREAM", cfg.Events.Stream))
	}
	fmt.Fprintf(stdout, "Order events (one JSON line each):\n\n  %s %s events tail\n\n", strings.Join(env, " "), demoCommand)
}

// shellAssign is name=value as sh reads it back: single-quoted unless value
// is made of characters sh leaves alone.
func shellAssign(name, value string) string {
	plain := value != "" && strings.Trim(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-@%+,") == ""
	if plain {
		return name + "=" + value
	}
	return name + "='" + strings.ReplaceAll(value, "'", `'\''`) + "'"
}
