package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/seckill-oss/seckill/internal/outbox"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// TestEventsTailSaysTheStreamIsEmpty: `events tail` on the real Redis, on a
// key prefix with no stream, and then on a stream with no entries, says so
// on stderr within 2 s, naming the stream and the prefix, and then still
// prints the first event when it comes.
//
// Can fail: a tail that only blocks on XREAD says nothing: "no notice on
// stderr within 2s".
func TestEventsTailSaysTheStreamIsEmpty(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	for _, tc := range []struct {
		what  string
		setup func(stream string)
	}{
		{"does not exist", func(string) {}},
		{"has no entries", func(stream string) {
			id := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"event", "x"}}).Val()
			rdb.XDel(ctx, stream, id)
		}},
	} {
		prefix := testenv.Prefix(t)
		stream := prefix + "events"
		tc.setup(stream)
		p := start(t, map[string]string{"SECKILL_REDIS_URL": testenv.RedisURL(t), "SECKILL_KEY_PREFIX": prefix}, "events", "tail")
		want := fmt.Sprintf("stream %q %s (key prefix %q", stream, tc.what, prefix)
		waitOutput(t, p.stderr.String, want, 2*time.Second)
		rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"event", `{"id":"first"}`}})
		waitOutput(t, p.stdout.String, `{"id":"first"}`, 5*time.Second)
		if err := p.stop(); err != nil {
			t.Errorf("events tail: %v", err)
		}
	}
}

// TestEventsTailKafkaOverSASLAndTLS: `events tail` reads a topic on a
// kfake broker that wants TLS and SASL SCRAM, from the settings alone.
func TestEventsTailKafkaOverSASLAndTLS(t *testing.T) {
	const topic, user, pass = "seckill.orders", "tail", "scram-tail-password"
	caFile, serverTLS := testenv.TLSServer(t)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", user, pass), kfake.TLS(serverTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	env := map[string]string{
		"SECKILL_EVENTS": "kafka", "SECKILL_EVENTS_KAFKA_BROKERS": strings.Join(cluster.ListenAddrs(), ","),
		"SECKILL_EVENTS_KAFKA_TLS": "true", "SECKILL_EVENTS_KAFKA_TLS_CA_FILE": caFile,
		"SECKILL_EVENTS_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "SECKILL_EVENTS_KAFKA_SASL_USER": user, "SECKILL_EVENTS_KAFKA_SASL_PASSWORD": pass,
	}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic)}, cfg.Events.kafkaOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Value: []byte(`{"id":"over-tls"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := start(t, env, "events", "tail")
	waitOutput(t, p.stdout.String, `{"id":"over-tls"}`, 10*time.Second)
	if strings.Contains(p.stderr.String(), pass) {
		t.Errorf("the password is on stderr: %s", p.stderr)
	}
}

// TestKafkaSecuritySettings: each TLS or SASL setting that cannot work is
// refused naming it, never showing the password; under the secure
// defaults SASL PLAIN without TLS to a broker off this machine is refused,
// and with SECKILL_STRICT=false it is named in the warning.
func TestKafkaSecuritySettings(t *testing.T) {
	base := map[string]string{"SECKILL_EVENTS": "kafka", "SECKILL_EVENTS_KAFKA_BROKERS": "kafka-1:9093"}
	for _, tc := range []struct {
		env  map[string]string
		want string // "": accepted
	}{
		{map[string]string{"SECKILL_EVENTS_KAFKA_TLS": "yes"}, "SECKILL_EVENTS_KAFKA_TLS"},
		{map[string]string{"SECKILL_EVENTS_KAFKA_TLS_CA_FILE": "/nonexistent.pem"}, "SECKILL_EVENTS_KAFKA_TLS_CA_FILE is set but"},
		{map[string]string{"SECKILL_EVENTS_KAFKA_TLS": "true", "SECKILL_EVENTS_KAFKA_TLS_CA_FILE": "/nonexistent.pem"}, "SECKILL_EVENTS_KAFKA_TLS_CA_FILE: outbox: kafka security"},
		{map[string]string{"SECKILL_EVENTS_KAFKA_SASL_MECHANISM": "gssapi", "SECKILL_EVENTS_KAFKA_SASL_USER": "u", "SECKILL_EVENTS_KAFKA_SASL_PASSWORD": "s3cret"}, "SECKILL_EVENTS_KAFKA_SASL_MECHANISM=\"gssapi\""},
		{map[string]string{"SECKILL_EVENTS_KAFKA_SASL_MECHANISM": "scram-sha-256", "SECKILL_EVENTS_KAFKA_SASL_USER": "u"}, "needs SECKILL_EVENTS_KAFKA_SASL_USER and SECKILL_EVENTS_KAFKA_SASL_PASSWORD"},
		{map[string]string{"SECKILL_EVENTS_KAFKA_SASL_PASSWORD": "s3cret"}, "without SECKILL_EVENTS_KAFKA_SASL_MECHANISM"},
		{map[string]string{"SECKILL_EVENTS_KAFKA_TLS": "true", "SECKILL_EVENTS_KAFKA_SASL_MECHANISM": "plain", "SECKILL_EVENTS_KAFKA_SASL_USER": "u", "SECKILL_EVENTS_KAFKA_SASL_PASSWORD": "s3cret"}, ""},
	} {
		env := map[string]string{}
		for _, m := range []map[string]string{base, tc.env} {
			for k, v := range m {
				env[k] = v
			}
		}
		_, err := loadConfig(func(k string) string { return env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v refused: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want an error containing %q", tc.env, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("the error shows the password: %v", err)
		}
	}
	checkPlainInClear(t)
}

// checkPlainInClear: SASL PLAIN without TLS, refused under the secure
// defaults unless every broker is on this machine, warned of without them.
func checkPlainInClear(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		brokers, strict string
		refused         bool
	}{
		{"kafka-1:9092,127.0.0.1:9092", "true", true},
		{"localhost:9092,127.0.0.1", "true", false},
		{"kafka-1:9092", "false", false},
	} {
		env := map[string]string{"SECKILL_EVENTS": "kafka", "SECKILL_EVENTS_KAFKA_BROKERS": tc.brokers, "SECKILL_STRICT": tc.strict,
			"SECKILL_EVENTS_KAFKA_SASL_MECHANISM": "plain", "SECKILL_EVENTS_KAFKA_SASL_USER": "u", "SECKILL_EVENTS_KAFKA_SASL_PASSWORD": "s3cret"}
		cfg, err := loadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.refusePlainInClear()
		if got := err != nil; got != tc.refused || err != nil && !strings.Contains(err.Error(), "SECKILL_EVENTS_KAFKA_TLS=true") {
			t.Errorf("PLAIN without TLS to %s (strict %s): %v, want refused %v", tc.brokers, tc.strict, err, tc.refused)
		}
	}
	cfg := config{Events: eventsConfig{Sink: eventsKafka, Kafka: outbox.KafkaSecurity{Mechanism: outbox.SASLPlain}}}
	if u := strings.Join(cfg.unsafeDefaults(), "; "); !strings.Contains(u, "SECKILL_EVENTS_KAFKA_SASL_MECHANISM=plain without TLS") {
		t.Errorf("the relaxed warning does not name PLAIN without TLS: %s", u)
	}
}

// waitOutput waits up to within for out() to contain want.
func waitOutput(t *testing.T, out func() string, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(out(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q not in the output within %v:\n%s", want, within, out())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
