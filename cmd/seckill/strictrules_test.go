package main

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"
)

// strong values the secure defaults accept: what `openssl rand -hex 32`
// prints, and the fixtures the other tests use.
func strongSecrets(t *testing.T) []string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return []string{hex.EncodeToString(b), secret32, "chaos-" + hex.EncodeToString(b[:16])}
}

// Under the secure defaults a secret or the admin token of the right length
// but too little variety (one character, or a short block, repeated) is
// refused, naming the variable and how to make a good one; a strong one is
// accepted, and SECKILL_STRICT=false names the weak one in its warning.
//
// Can fail: with weakSecret checking the length alone, "SECKILL_PAYMENT_SECRET=
// \"aaaa...\" (32 bytes): accepted".
func TestWeakSecretsRefused(t *testing.T) {
	base := map[string]string{"SECKILL_PAYMENT_URL": "https://pay.example", "SECKILL_PAYMENT_SECRET": secret32, "SECKILL_PAYMENT_MERCHANT_ID": "m-1"}
	weak := map[string][]string{
		"SECKILL_PAYMENT_SECRET":          {strings.Repeat("a", 32), strings.Repeat("ab", 16), strings.Repeat("abcdefgh", 4), strings.Repeat("0123456", 5)},
		"SECKILL_PAYMENT_SECRET_PREVIOUS": {strings.Repeat("a", 40), strings.Repeat("xy", 20)},
		"SECKILL_IDENTITY_SECRET":         {strings.Repeat("s", 32), strings.Repeat("secret", 6)},
		"SECKILL_ADMIN_TOKEN":             {strings.Repeat("ab", 8), strings.Repeat("a", 40), strings.Repeat("abcd", 5)},
	}
	for name, values := range weak {
		for _, v := range values {
			env := with(base, name, v)
			_, err := loadServe(serveEnv(env))
			if err == nil {
				t.Errorf("%s=%q (%d bytes): accepted", name, v, len(v))
				continue
			}
			for _, want := range []string{name, "openssl rand -hex 32", strictOff} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s=%q: the refusal does not say %s: %v", name, v, want, err)
				}
			}
			if strings.Contains(err.Error(), v) {
				t.Errorf("%s: the refusal shows the value: %v", name, err)
			}
			relaxed, err := loadServe(serveEnv(with(env, "SECKILL_STRICT", "false")))
			if err != nil || !strings.Contains(strings.Join(relaxed.unsafeDefaults(), "; "), name) {
				t.Errorf("%s=%q with SECKILL_STRICT=false: %v, or not named in %v", name, v, err, relaxed.unsafeDefaults())
			}
		}
		for _, v := range strongSecrets(t) {
			if _, err := loadServe(serveEnv(with(base, name, v))); err != nil {
				t.Errorf("%s, a strong value: %v", name, err)
			}
		}
	}
	for _, token := range []string{token16, "test-t:1a2b3c4d:", "e2e-admin-token-0123456789"} {
		if _, err := loadServe(serveEnv(with(base, "SECKILL_ADMIN_TOKEN", token))); err != nil {
			t.Errorf("admin token %q: %v", token, err)
		}
	}
}

// What `openssl rand -hex N` prints is never weak, at the shortest lengths
// the rules allow.
func TestRandomSecretsAreStrong(t *testing.T) {
	for i := 0; i < 2000; i++ {
		for _, n := range []int{minSecretLen, minStrictSecret, 64} {
			b := make([]byte, n/2)
			_, _ = rand.Read(b)
			if why := weakSecret(hex.EncodeToString(b), n); why != "" {
				t.Fatalf("%d random hex characters: %s", n, why)
			}
		}
	}
}

// with returns a copy of base with the pairs kv (key, value, ...) set.
func with(base map[string]string, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Under the secure defaults serve starts, with a warning naming the
// setting, on a plain-http provider that is not loopback, a rate limit set
// to 0, and the admin API and /metrics on a public listener.
//
// Can fail: with the SECKILL_RATE_PER_USER rule taken out of the settings table,
// "SECKILL_RATE_PER_USER=0: warnings [], want one naming SECKILL_RATE_PER_USER".
func TestStrictWarnings(t *testing.T) {
	public := map[string]string{"SECKILL_HTTP_ADDR": ":8080", "SECKILL_IDENTITY_SECRET": secret32}
	pay := map[string]string{"SECKILL_PAYMENT_ALLOW_HTTP": "true", "SECKILL_PAYMENT_SECRET": secret32, "SECKILL_PAYMENT_MERCHANT_ID": "m-1"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // the warning's variable; "": none
	}{
		{"http provider on the network", with(pay, "SECKILL_PAYMENT_URL", "http://pay.internal:8082"), "SECKILL_PAYMENT_ALLOW_HTTP"},
		{"http provider on loopback", with(pay, "SECKILL_PAYMENT_URL", "http://127.0.0.1:8082"), ""},
		{"https provider", with(pay, "SECKILL_PAYMENT_URL", "https://pay.example"), ""},
		{"SECKILL_RATE_GLOBAL=0", map[string]string{"SECKILL_RATE_GLOBAL": "0"}, "SECKILL_RATE_GLOBAL"},
		{"SECKILL_RATE_PER_USER=0", map[string]string{"SECKILL_RATE_PER_USER": "0"}, "SECKILL_RATE_PER_USER"},
		{"SECKILL_RATE_PER_USER_READS=0", map[string]string{"SECKILL_RATE_PER_USER_READS": "0.0"}, "SECKILL_RATE_PER_USER_READS"},
		{"SECKILL_RATE_JOINS_PER_ADDRESS=0", map[string]string{"SECKILL_RATE_JOINS_PER_ADDRESS": "0"}, "SECKILL_RATE_JOINS_PER_ADDRESS"},
		{"rates at their defaults", map[string]string{"SECKILL_RATE_PER_USER": "50"}, ""},
		{"admin API on a public listener", public, "SECKILL_ADMIN_ADDR"},
		{"admin API on its own listener", with(public, "SECKILL_ADMIN_ADDR", "10.0.0.5:9091"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadServe(serveEnv(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			warns := warnings(t, func(log *slog.Logger) { logSecurity(cfg, log) })
			var names []any
			for _, w := range warns {
				names = append(names, w["variable"])
			}
			switch {
			case tc.want == "" && len(warns) > 0:
				t.Errorf("warnings %v, want none", warns)
			case tc.want != "" && (len(warns) != 1 || warns[0]["variable"] != tc.want || !strings.Contains(warns[0]["msg"].(string), tc.want)):
				t.Errorf("%s: warnings %v, want one naming %s", tc.name, names, tc.want)
			}
		})
	}
}

// Under the secure defaults a Redis that is not on loopback must be given
// credentials in SECKILL_REDIS_URL, in each mode; rediss:// (TLS) is read
// as redis:// is, with TLS on.
//
// Can fail: with the SECKILL_REDIS_URL rule taken out of the settings table,
// "single, no credentials: accepted, want a refusal naming SECKILL_REDIS_URL".
func TestRedisWithoutCredentialsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, mode, url string
		refused         bool
	}{
		{"single, no credentials", "single", "redis://10.0.0.7:6379/0", true},
		{"single, TLS, no credentials", "single", "rediss://redis.example:6380/0", true},
		{"single, password", "single", "redis://:pw@10.0.0.7:6379/0", false},
		{"single, ACL user", "single", "redis://seckill:pw@10.0.0.7:6379/0", false},
		{"single, TLS, ACL user", "single", "rediss://seckill:pw@redis.example:6380/0", false},
		{"single, loopback", "single", "redis://127.0.0.1:6379/0", false},
		{"single, localhost", "single", "redis://localhost:6379/0", false},
		{"cluster, no credentials", "cluster", "redis://10.0.0.1:7000?addr=10.0.0.2:7000", true},
		{"cluster, one node not loopback", "cluster", "redis://127.0.0.1:7000?addr=10.0.0.2:7000", true},
		{"cluster, credentials", "cluster", "rediss://seckill:pw@10.0.0.1:7000?addr=10.0.0.2:7000", false},
		{"cluster, loopback", "cluster", "redis://127.0.0.1:7000?addr=127.0.0.1:7001", false},
		{"sentinel, no credentials", "sentinel", "redis://10.0.0.1:26379?master_name=m", true},
		{"sentinel, the Sentinels' only", "sentinel", "redis://s:spw@10.0.0.1:26379?master_name=m", true},
		{"sentinel, the primary's", "sentinel", "redis://10.0.0.1:26379?master_name=m&username=seckill&password=pw", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"SECKILL_REDIS_MODE": tc.mode, "SECKILL_REDIS_URL": tc.url}
			cfg, err := loadServe(serveEnv(env))
			switch {
			case tc.refused && err == nil:
				t.Fatalf("accepted, want a refusal naming SECKILL_REDIS_URL")
			case tc.refused && (!strings.Contains(err.Error(), "SECKILL_REDIS_URL") || strings.Contains(err.Error(), "pw")):
				t.Fatalf("the refusal does not name SECKILL_REDIS_URL, or shows a password: %v", err)
			case !tc.refused && err != nil:
				t.Fatalf("refused: %v", err)
			}
			if tc.refused {
				if _, err := loadServe(serveEnv(with(env, "SECKILL_STRICT", "false"))); err != nil {
					t.Errorf("SECKILL_STRICT=false: %v", err)
				}
				return
			}
			if tls := strings.HasPrefix(tc.url, "rediss://"); tls && cfg.Redis.single != nil && cfg.Redis.single.TLSConfig == nil {
				t.Errorf("rediss:// without TLS")
			}
		})
	}
}
