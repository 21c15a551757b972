package main

import (
	"strings"
	"testing"
	"time"
)

// TestStartupLogRedactsCredentials: SECKILL_PAYMENT_URL and
// SECKILL_USERCHECK_URL are logged as scheme, host and path only (no user
// name, password nor query), and the provider's API key and the Kafka SASL
// password never, while both URLs are named in the start-up log.
func TestStartupLogRedactsCredentials(t *testing.T) {
	env := realEnv(t, time.Millisecond)
	env["SECKILL_PAYMENT_URL"] = "http://payuser:pay-s3cret@127.0.0.1:1/provider"
	env["SECKILL_PAYMENT_SECRET"] = "callback-secret-123-0123456789abc"
	env["SECKILL_PAYMENT_API_KEY"] = "api-key-s3cret"
	env["SECKILL_PAYMENT_MERCHANT_ID"] = "m-1"
	env["SECKILL_USERCHECK_URL"] = "http://sk_live_TOKEN@127.0.0.1:1/check?key=q-s3cret"
	env["SECKILL_EVENTS"], env["SECKILL_EVENTS_KAFKA_BROKERS"] = "kafka", "127.0.0.1:1"
	env["SECKILL_EVENTS_KAFKA_SASL_MECHANISM"], env["SECKILL_EVENTS_KAFKA_SASL_USER"] = "scram-sha-256", "kafkauser"
	env["SECKILL_EVENTS_KAFKA_SASL_PASSWORD"] = "kafka-s3cret"
	p := start(t, env, "serve")
	p.addr()
	if err := p.stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	logs := p.stderr.String()
	for _, secret := range []string{"payuser", "pay-s3cret", "sk_live_TOKEN", "q-s3cret", "api-key-s3cret", "callback-secret-123-0123456789abc", "kafka-s3cret"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log shows %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{`"http://127.0.0.1:1/provider"`, `"http://127.0.0.1:1/check"`, `"kafka_sasl":"scram-sha-256"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not name the URL %q redacted:\n%s", want, logs)
		}
	}
}
