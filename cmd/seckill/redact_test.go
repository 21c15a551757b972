package main

import (
	"strings"
	"testing"
	"time"
)

// TestStartupLogRedactsCredentials: credentials in SECKILL_PAYMENT_URL and
// SECKILL_USERCHECK_URL are logged redacted, and the provider's API key
// never, while both URLs are named in the start-up log.
func TestStartupLogRedactsCredentials(t *testing.T) {
	env := realEnv(t, time.Millisecond)
	env["SECKILL_PAYMENT_URL"] = "http://payuser:pay-s3cret@127.0.0.1:1/provider"
	env["SECKILL_PAYMENT_SECRET"] = "callback-secret-123-0123456789abc"
	env["SECKILL_PAYMENT_API_KEY"] = "api-key-s3cret"
	env["SECKILL_PAYMENT_MERCHANT_ID"] = "m-1"
	env["SECKILL_USERCHECK_URL"] = "http://ucuser:uc-s3cret@127.0.0.1:1"
	p := start(t, env, "serve")
	p.addr()
	if err := p.stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	logs := p.stderr.String()
	for _, secret := range []string{"pay-s3cret", "uc-s3cret", "api-key-s3cret", "callback-secret-123-0123456789abc"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log shows %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{"payuser:xxxxx@127.0.0.1:1/provider", "ucuser:xxxxx@127.0.0.1:1"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not name the URL %q redacted:\n%s", want, logs)
		}
	}
}
