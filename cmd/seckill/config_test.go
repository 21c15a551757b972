package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/order"
)

// TestPaymentURLMustBeHTTPS: the provider's answer decides what is paid and
// its query carries the API key, so a plain http provider URL is refused at
// start-up unless it is on loopback (a stub on this machine) or
// SECKILL_PAYMENT_ALLOW_HTTP=true says a trusted sidecar carries it. The
// user check, an internal service, is not held to it.
func TestPaymentURLMustBeHTTPS(t *testing.T) {
	for _, tc := range []struct {
		url, allow string
		want       string // "": accepted
	}{
		{"https://pay.example.com", "", ""},
		{"https://pay.example.com:8443/base", "", ""},
		{"http://127.0.0.1:8082", "", ""},
		{"http://127.8.9.10:8082", "", ""},
		{"http://[::1]:8082", "", ""},
		{"http://localhost:8082", "", ""},
		{"http://LOCALHOST:8082", "", ""},
		{"http://paystub:8082", "true", ""},
		{"http://10.0.0.5:8082", "1", ""},
		{"http://paystub:8082", "", "SECKILL_PAYMENT_URL"},
		{"http://paystub:8082", "false", "must be https://"},
		{"http://10.0.0.5:8082", "", "must be https://"},
		{"http://[::ffff:10.0.0.5]:8082", "", "must be https://"},
		{"http://localhost.example.com:8082", "", "must be https://"},
		{"http://127.0.0.1.nip.io:8082", "", "must be https://"},
		{"http://user:s3cret@pay.example.com", "", `"http://pay.example.com"`},
		{"http://sk_live_TOKEN@pay.example.com/v1", "", `"http://pay.example.com/v1"`},
		{"http://pay.example.com/v1?key=s3cret", "", "SECKILL_PAYMENT_URL"},
		{"ftp://pay.example.com", "", "SECKILL_PAYMENT_URL"},
		{"https://pay.example.com", "maybe", "SECKILL_PAYMENT_ALLOW_HTTP"},
	} {
		env := map[string]string{"SECKILL_PAYMENT_URL": tc.url, "SECKILL_PAYMENT_SECRET": "0123456789abcdef", "SECKILL_PAYMENT_ALLOW_HTTP": tc.allow}
		_, err := loadConfig(func(k string) string { return env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s (allow %q) refused: %v", tc.url, tc.allow, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s (allow %q): %v, want an error containing %q", tc.url, tc.allow, err, tc.want)
		case err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "sk_live")):
			t.Errorf("%s: the error shows the user name, password or query: %v", tc.url, err)
		}
	}
	env := map[string]string{"SECKILL_USERCHECK_URL": "http://userstub:8081"}
	if _, err := loadConfig(func(k string) string { return env[k] }); err != nil {
		t.Errorf("a plain http user check refused: %v", err)
	}
}

// TestShortSecretsWarned: with SECKILL_STRICT=false an admin token or
// payment secret that is too short is named in the start-up warning, never
// its value; the service still starts. In the demo, each is a warning
// naming the variable and the minimum.
func TestShortSecretsWarned(t *testing.T) {
	env := map[string]string{
		"SECKILL_STRICT":         "false",
		"SECKILL_HTTP_ADDR":      "127.0.0.1:0",
		"SECKILL_REDIS_URL":      "redis://127.0.0.1:1/0",
		"SECKILL_MYSQL_DSN":      "u:p@tcp(127.0.0.1:1)/s",
		"SECKILL_ADMIN_TOKEN":    "tok-short",
		"SECKILL_PAYMENT_URL":    "http://127.0.0.1:1",
		"SECKILL_PAYMENT_SECRET": "pay-short",
	}
	// Cancelled: serve logs the warnings, then stops at the first store.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	_ = run(ctx, []string{"seckill", "serve"}, func(k string) string { return env[k] }, io.Discard, &stderr)
	logs := stderr.String()
	for _, name := range []string{"SECKILL_ADMIN_TOKEN shorter than 16 bytes", "SECKILL_PAYMENT_SECRET shorter than 32 bytes"} {
		if !strings.Contains(logs, name) || !strings.Contains(logs, `"variable":"SECKILL_STRICT"`) {
			t.Errorf("no warning naming %s:\n%s", name, logs)
		}
	}
	for _, secret := range []string{"tok-short", "pay-short"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log shows the secret %q:\n%s", secret, logs)
		}
	}

	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	warnShortSecrets(config{AdminToken: "tok-short"}, log)
	if !warned(buf.String(), "SECKILL_ADMIN_TOKEN") {
		t.Errorf("the demo's short admin token is not warned about:\n%s", buf.String())
	}
	buf.Reset()
	warnShortSecrets(config{AdminToken: strings.Repeat("a", 16), PaymentSecret: strings.Repeat("p", 32)}, log)
	warnShortSecrets(config{}, log) // unset: warned about elsewhere, or generated
	if buf.Len() != 0 {
		t.Errorf("warned about secrets of 16 bytes and more, or unset ones:\n%s", buf.String())
	}
}

// warned reports whether logs hold a WARN line naming variable and the
// minimum length.
func warned(logs, variable string) bool {
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["level"] == "WARN" && rec["variable"] == variable && rec["min_bytes"] == 16.0 {
			return true
		}
	}
	return false
}

// TestMySQLDSNCharsetRefused: a DSN whose connection charset would let an
// escaped quote through client-side interpolation is refused at start-up,
// naming the variable and the parameter, never the password.
func TestMySQLDSNCharsetRefused(t *testing.T) {
	for _, tc := range []struct{ name, param, want string }{
		{"SECKILL_MYSQL_DSN", "charset=gbk", "SECKILL_MYSQL_DSN: DSN parameter charset=gbk"},
		{"SECKILL_MIGRATE_DSN", "charset=utf8mb4,sjis", "SECKILL_MIGRATE_DSN: DSN parameter charset=sjis"},
		{"SECKILL_MYSQL_DSN", "charset=utf8mb4", ""},
	} {
		env := map[string]string{tc.name: "u:s3cret@tcp(127.0.0.1:3306)/s?" + tc.param}
		_, err := loadConfig(func(k string) string { return env[k] })
		switch {
		case tc.want == "" && err != nil && strings.Contains(err.Error(), tc.name):
			t.Errorf("%s refused: %v", tc.param, err)
		case tc.want != "" && (!errors.Is(err, order.ErrUnsafeCharset) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s=…?%s: %v, want ErrUnsafeCharset saying %q", tc.name, tc.param, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
