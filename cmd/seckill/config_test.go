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
	"time"

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

func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"user check not shorter than lock", map[string]string{"SECKILL_LOCK_TTL": "1s", "SECKILL_USERCHECK_TIMEOUT": "1s"}, "must be shorter than SECKILL_LOCK_TTL"},
		{"user check default vs short lock", map[string]string{"SECKILL_LOCK_TTL": "300ms"}, "must be shorter than SECKILL_LOCK_TTL"},
		{"bad lock TTL", map[string]string{"SECKILL_LOCK_TTL": "2"}, `SECKILL_LOCK_TTL="2": not a duration`},
		{"bad user-check timeout", map[string]string{"SECKILL_USERCHECK_TIMEOUT": "fast"}, "SECKILL_USERCHECK_TIMEOUT"},
		{"negative lock wait", map[string]string{"SECKILL_LOCK_WAIT": "-1s"}, "SECKILL_LOCK_WAIT"},
		{"zero lock wait", map[string]string{"SECKILL_LOCK_WAIT": "0s"}, "SECKILL_LOCK_WAIT"},
		{"queue of no one", map[string]string{"SECKILL_QUEUE_MAX": "0"}, "SECKILL_QUEUE_MAX"},
		{"queue size not a number", map[string]string{"SECKILL_QUEUE_MAX": "lots"}, "SECKILL_QUEUE_MAX"},
		{"no queued buyers at all", map[string]string{"SECKILL_QUEUE_MAX_TOTAL": "0"}, "SECKILL_QUEUE_MAX_TOTAL"},
		{"total queue not a number", map[string]string{"SECKILL_QUEUE_MAX_TOTAL": "many"}, "SECKILL_QUEUE_MAX_TOTAL"},
		{"bad rate", map[string]string{"SECKILL_RATE_PER_USER": "-3"}, "SECKILL_RATE_PER_USER"},
		{"pool of no connections", map[string]string{"SECKILL_MYSQL_MAX_CONNS": "0"}, "SECKILL_MYSQL_MAX_CONNS"},
		{"bad log format", map[string]string{"SECKILL_LOG_FORMAT": "xml"}, "SECKILL_LOG_FORMAT"},
		{"bad log level", map[string]string{"SECKILL_LOG_LEVEL": "loud"}, "SECKILL_LOG_LEVEL"},
		{"payment URL without secret", map[string]string{"SECKILL_PAYMENT_URL": "https://pay:8082"}, "SECKILL_PAYMENT_SECRET is required"},
		{"payment window below 1s", map[string]string{"SECKILL_PAYMENT_WINDOW": "999ms"}, "SECKILL_PAYMENT_WINDOW"},
		{"bad payment window", map[string]string{"SECKILL_PAYMENT_WINDOW": "soon"}, "SECKILL_PAYMENT_WINDOW"},
		{"unknown Redis mode", map[string]string{"SECKILL_REDIS_MODE": "ring", "SECKILL_REDIS_URL": "redis://127.0.0.1:6379"}, "SECKILL_REDIS_MODE"},
		{"cluster mode without a URL", map[string]string{"SECKILL_REDIS_MODE": "cluster"}, "SECKILL_REDIS_MODE=\"cluster\" needs SECKILL_REDIS_URL"},
		{"bad single URL", map[string]string{"SECKILL_REDIS_URL": "http://127.0.0.1:6379"}, "SECKILL_REDIS_URL"},
		{"unparsable URL", map[string]string{"SECKILL_REDIS_URL": "redis://user:s3cret@127.0.0.1:6379/%zz"}, "SECKILL_REDIS_URL"},
		{"bad cluster URL", map[string]string{"SECKILL_REDIS_MODE": "cluster", "SECKILL_REDIS_URL": "redis://127.0.0.1:7000?addr=127.0.0.1:7001&bogus=1"}, "SECKILL_REDIS_URL"},
		{"sentinel URL without master", map[string]string{"SECKILL_REDIS_MODE": "sentinel", "SECKILL_REDIS_URL": "redis://127.0.0.1:26379"}, "master_name"},
		{"brace in key prefix", map[string]string{"SECKILL_KEY_PREFIX": "shop{1}:"}, "SECKILL_KEY_PREFIX"},
		{"Redis without the database", map[string]string{"SECKILL_REDIS_URL": "redis://127.0.0.1:6379", "SECKILL_USERCHECK": "approve-all"}, "SECKILL_MYSQL_DSN is required"},
		{"the database without Redis", map[string]string{"SECKILL_MYSQL_DSN": "seckill:seckill@tcp(127.0.0.1:3306)/seckill", "SECKILL_USERCHECK": "approve-all"}, "SECKILL_REDIS_URL is required"},
		{"serve without stores", map[string]string{}, "serve needs SECKILL_REDIS_URL and SECKILL_MYSQL_DSN"},
		{"negative wait replicas", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "-1"}, "SECKILL_REDIS_WAIT_REPLICAS"},
		{"wait replicas not a number", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "all"}, "SECKILL_REDIS_WAIT_REPLICAS"},
		{"wait timeout eats the lease", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "1", "SECKILL_REDIS_WAIT_TIMEOUT": "600ms"}, "SECKILL_REDIS_WAIT_TIMEOUT"},
		{"bad strict", map[string]string{"SECKILL_STRICT": "yes please"}, "SECKILL_STRICT"},
		{"bad user check mode", map[string]string{"SECKILL_USERCHECK": "everyone"}, "SECKILL_USERCHECK"},
		{"bad require timestamp", map[string]string{"SECKILL_PAYMENT_REQUIRE_TIMESTAMP": "sometimes"}, "SECKILL_PAYMENT_REQUIRE_TIMESTAMP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["SECKILL_HTTP_ADDR"] = "127.0.0.1:0"
			// Cancelled: should the configuration be accepted, run returns
			// at once instead of serving for ever.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stderr bytes.Buffer
			err := run(ctx, []string{"seckill", "serve"}, func(k string) string { return tc.env[k] }, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Fatal("served despite a refused configuration")
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(stderr.String(), "s3cret") {
				t.Fatalf("the Redis password leaked into the message: %v", err)
			}
		})
	}

	t.Run("every bad variable named at once", func(t *testing.T) {
		env := map[string]string{"SECKILL_LOCK_TTL": "x", "SECKILL_LOG_FORMAT": "xml"}
		_, err := loadConfig(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "SECKILL_LOCK_TTL") || !strings.Contains(err.Error(), "SECKILL_LOG_FORMAT") {
			t.Fatalf("loadConfig = %v", err)
		}
	})
	t.Run("Redis modes", func(t *testing.T) {
		for mode, url := range map[string]string{
			"single":   "redis://127.0.0.1:6379/0",
			"cluster":  "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
			"sentinel": "redis://127.0.0.1:26379?master_name=seckill&addr=127.0.0.1:26380",
		} {
			env := map[string]string{"SECKILL_REDIS_MODE": mode, "SECKILL_REDIS_URL": url, "SECKILL_STRICT": "false"}
			c, err := loadConfig(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			rdb := c.Redis.client()
			_ = rdb.Close()
			if c.RedisMode != mode || c.Redis.mode != mode {
				t.Errorf("%s: parsed as %q", mode, c.Redis.mode)
			}
			if o := c.Redis.cluster; o != nil && (o.ClusterStateReloadInterval != clusterReload || !o.ContextTimeoutEnabled || o.PoolSize != 64) {
				t.Errorf("cluster options lack the defaults: %+v", o)
			}
		}
	})
	t.Run("defaults", func(t *testing.T) {
		c, err := loadConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPAddr != ":8080" || c.LockTTL != 2*time.Second || c.UserCheckTimeout != 500*time.Millisecond ||
			c.LockWait != time.Second || c.QueueMax != 10_000 || c.QueueMaxTotal != 20_000 || c.ShutdownTimeout != 15*time.Second || !c.embedded() ||
			c.PaymentURL != "" || c.PaymentWindow != 15*time.Minute || c.RedisMode != "single" || c.WaitReplicas != 0 {
			t.Fatalf("defaults: %+v", c)
		}
	})
}

// The per-user rate limit is on unless turned off, with a burst
// that 100 concurrent purchases by one user stay under; 0 turns it off.
func TestPerUserRateLimitIsOnByDefault(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	api := apiConfig(c)
	if api.UserRate != 50 || api.UserBurst < 100 {
		t.Errorf("default per-user limit %v/s with a burst of %d, want 50/s and a burst of at least 100", api.UserRate, api.UserBurst)
	}
	env := map[string]string{"SECKILL_RATE_PER_USER": "0"}
	if c, err = loadConfig(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if api := apiConfig(c); api.UserRate != 0 {
		t.Errorf("SECKILL_RATE_PER_USER=0: per-user rate %v, want off", api.UserRate)
	}
}
