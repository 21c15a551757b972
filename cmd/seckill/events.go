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

// eventsConfig is the order events' part of the configuration.
type eventsConfig struct {
	Sink         string   // eventsRedis, eventsKafka or eventsOff
	Stream       string   // the Redis stream
	KafkaBrokers []string // with eventsKafka
	KafkaTopic   string
	Kafka        outbox.KafkaSecurity // TLS and SASL; the password is never logged
	kafkaOpts    []kgo.Opt            // Kafka's options, built once the settings read well
}

// checkKafkaSecurity holds the Kafka clients' TLS and SASL settings to one
// another (the table reads each alone).
func checkKafkaSecurity(c config) error {
	k := c.Events.Kafka
	switch {
	case k.CAFile != "" && !k.TLS:
		return errors.New("SECKILL_EVENTS_KAFKA_TLS_CA_FILE is set but SECKILL_EVENTS_KAFKA_TLS is not true")
	case k.Mechanism != "" && (k.User == "" || k.Password == ""):
		return fmt.Errorf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=%s needs SECKILL_EVENTS_KAFKA_SASL_USER and SECKILL_EVENTS_KAFKA_SASL_PASSWORD", k.Mechanism)
	case k.Mechanism == "" && (k.User != "" || k.Password != ""):
		return errors.New("SECKILL_EVENTS_KAFKA_SASL_USER or _PASSWORD is set without SECKILL_EVENTS_KAFKA_SASL_MECHANISM")
	}
	return nil
}

// readSASLMechanism reads SECKILL_EVENTS_KAFKA_SASL_MECHANISM.
func readSASLMechanism(c *config, e *envReader, v string) {
	v = strings.ToLower(v)
	switch v {
	case "", outbox.SASLPlain, outbox.SASLScram256, outbox.SASLScram512:
		c.Events.Kafka.Mechanism = v
	default:
		e.fail(fmt.Errorf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=%q: must be plain, scram-sha-256 or scram-sha-512", v))
	}
}

// kafkaOptions builds the Kafka clients' TLS and SASL options once the
// settings read well, reading the CA file now so a bad one fails at start.
func (c *config) kafkaOptions() error {
	if c.Events.Sink != eventsKafka {
		return nil
	}
	var err error
	if c.Events.kafkaOpts, err = c.Events.Kafka.Opts(); err != nil {
		return fmt.Errorf("SECKILL_EVENTS_KAFKA_TLS_CA_FILE: %w", err)
	}
	return nil
}

// kafkaPlainInClear says why SASL PLAIN without TLS to a broker that is
// not loopback is unsafe ("" when it is not in force): PLAIN sends the
// password as it is, so anyone on the path could read it and produce
// forged order events. The secure defaults refuse it (secureRules).
func kafkaPlainInClear(c config) string {
	k := c.Events.Kafka
	if c.Events.Sink != eventsKafka || k.Mechanism != outbox.SASLPlain || k.TLS {
		return ""
	}
	to := "the brokers"
	for _, b := range c.Events.KafkaBrokers {
		host, _, err := net.SplitHostPort(b)
		if err != nil {
			host = b // franz-go adds the default port
		}
		if isLoopbackHost(host) {
			to = ""
			continue
		}
		to = b
		break
	}
	if to == "" {
		return ""
	}
	return fmt.Sprintf("SECKILL_EVENTS_KAFKA_SASL_MECHANISM=plain without TLS (SECKILL_EVENTS_KAFKA_TLS=true) sends the Kafka password in clear to %s: turn TLS on, or use scram-sha-256 or scram-sha-512", to)
}

// refusePlainInClear is kafkaPlainInClear as the secure defaults refuse
// it, for a command that does not go through serve's checks.
func (c config) refusePlainInClear() error {
	if why := kafkaPlainInClear(c); c.Strict && why != "" {
		return fmt.Errorf("%s (or %s)", why, strictOff)
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
	relay := outbox.Start(b.orders.Outbox, sink, outbox.Config{
		Retention: cfg.EventsRetention, Log: log.With("component", "events"), Metrics: outbox.NewMetrics(reg, log),
	})
	b.orders.Outbox.HandOffEvents(relay.Handoff())
	return relay, nil
}

// closeRelay stops the relay; groups committed from then on leave their
// events to a claim.
func closeRelay(b *backend, relay *outbox.Relay) {
	b.orders.Outbox.HandOffEvents(nil)
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
