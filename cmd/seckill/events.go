package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

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
	Kafka        outbox.KafkaSecurity // TLS and SASL; the password is never logged
	kafkaOpts    []kgo.Opt            // Kafka's options, built once the settings read well
}

// readEvents reads the events' settings (SECKILL_EVENTS_RETENTION and
// SECKILL_EVENTS_STREAM_MAXLEN are in the numeric settings' table).
func (c *config) readEvents(e *envReader) {
	c.Events.Sink = strings.ToLower(envOr(e.get, "SECKILL_EVENTS", eventsRedis))
	c.Events.Stream = envOr(e.get, "SECKILL_EVENTS_STREAM", c.KeyPrefix+"events")
	c.Events.KafkaTopic = envOr(e.get, "SECKILL_EVENTS_KAFKA_TOPIC", defaultEventsTopic)
	for _, b := range strings.Split(e.get("SECKILL_EVENTS_KAFKA_BROKERS"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Events.KafkaBrokers = append(c.Events.KafkaBrokers, b)
		}
	}
	switch c.Events.Sink {
	case eventsRedis, eventsOff:
	case eventsKafka:
		if len(c.Events.KafkaBrokers) == 0 {
			e.fail(errors.New("SECKILL_EVENTS=kafka needs SECKILL_EVENTS_KAFKA_BROKERS (host:port, comma-separated)"))
		}
		c.readKafkaSecurity(e)
	default:
		e.fail(fmt.Errorf("SECKILL_EVENTS=%q: must be redis, kafka or off", c.Events.Sink))
	}
}

// readKafkaSecurity reads the Kafka clients' TLS and SASL settings, and
// reads the CA file now, so a bad one fails at start.
func (c *config) readKafkaSecurity(e *envReader) {
	k := &c.Events.Kafka
	k.TLS = e.boolean("SECKILL_EVENTS_KAFKA_TLS", "false")
	k.CAFile = strings.TrimSpace(e.get("SECKILL_EVENTS_KAFKA_TLS_CA_FILE"))
	k.Mechanism = strings.ToLower(strings.TrimSpace(e.get("SECKILL_EVENTS_KAFKA_SASL_MECHANISM")))
	k.User, k.Password = e.get("SECKILL_EVENTS_KAFKA_SASL_USER"), e.get("SECKILL_EVENTS_KAFKA_SASL_PASSWORD")
	n := len(e.errs)
	switch {
	case k.CAFile != "" && !k.TLS:
		e.fail(errors.New("SECKILL_EVENTS_KAFKA_TLS_CA_FILE is set but SECKILL_EVENTS_KAFKA_TLS is not true"))
	case k.Mechanism != "" && k.Mechanism != outbox.SASLPlain && k.Mechanism != outbox.SASLScram256 && k.Mechanism != outbox.SASLScram512:
		e.fail(fmt.Errorf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=%q: must be plain, scram-sha-256 or scram-sha-512", k.Mechanism))
	case k.Mechanism != "" && (k.User == "" || k.Password == ""):
		e.fail(fmt.Errorf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=%s needs SECKILL_EVENTS_KAFKA_SASL_USER and SECKILL_EVENTS_KAFKA_SASL_PASSWORD", k.Mechanism))
	case k.Mechanism == "" && (k.User != "" || k.Password != ""):
		e.fail(errors.New("SECKILL_EVENTS_KAFKA_SASL_USER or _PASSWORD is set without SECKILL_EVENTS_KAFKA_SASL_MECHANISM"))
	}
	if len(e.errs) > n {
		return
	}
	var err error
	if c.Events.kafkaOpts, err = k.Opts(); err != nil {
		e.fail(fmt.Errorf("SECKILL_EVENTS_KAFKA_TLS_CA_FILE: %w", err))
	}
}

// kafkaPlainInClear refuses, under the secure defaults, SASL PLAIN without
// TLS to a broker that is not loopback: PLAIN sends the password as it is,
// so anyone on the path could read it and produce forged order events.
func (c config) kafkaPlainInClear() error {
	k := c.Events.Kafka
	if !c.Strict || c.Events.Sink != eventsKafka || k.Mechanism != outbox.SASLPlain || k.TLS {
		return nil
	}
	for _, b := range c.Events.KafkaBrokers {
		host, _, err := net.SplitHostPort(b)
		if err != nil {
			host = b // franz-go adds the default port
		}
		if !isLoopbackHost(host) {
			return fmt.Errorf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=plain without SECKILL_EVENTS_KAFKA_TLS=true sends the Kafka password in clear to %s: turn TLS on, or use scram-sha-256 or scram-sha-512 (or %s)", b, strictOff)
		}
	}
	return nil
}

// eventSink is the configured sink, nil with SECKILL_EVENTS=off.
func eventSink(cfg config, b *backend) (outbox.Sink, error) {
	switch cfg.Events.Sink {
	case eventsOff:
		return nil, nil
	case eventsKafka:
		return outbox.NewKafkaSink(cfg.Events.KafkaBrokers, cfg.Events.KafkaTopic, cfg.Events.kafkaOpts...)
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
	attrs := []any{"sink", cfg.Events.Sink, "retention", cfg.EventsRetention.String()}
	if cfg.Events.Sink == eventsKafka { // never the user's password
		attrs = append(attrs, "kafka_tls", cfg.Events.Kafka.TLS, "kafka_sasl", cfg.Events.Kafka.Mechanism)
	}
	log.Info("order events", attrs...)
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
