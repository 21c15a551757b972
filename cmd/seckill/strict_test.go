package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// serveEnv is a configuration serve accepts under the secure defaults, on
// loopback, with overrides ("" unsets).
func serveEnv(overrides map[string]string) func(string) string {
	env := map[string]string{
		"SECKILL_HTTP_ADDR": "127.0.0.1:8080", "SECKILL_REDIS_URL": "redis://127.0.0.1:6379",
		"SECKILL_MYSQL_DSN": "seckill:seckill@tcp(127.0.0.1:3306)/seckill", "SECKILL_USERCHECK_URL": "http://127.0.0.1:8081",
	}
	for k, v := range overrides {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// loadServe is the configuration as serve takes it.
func loadServe(getenv func(string) string) (config, error) {
	c, err := loadConfig(getenv)
	if err != nil {
		return c, err
	}
	return c, c.checkSecure()
}

const (
	secret32 = "0123456789abcdef0123456789abcdef"
	token16  = "0123456789abcdef"
)

// TestSecureDefaultsRefuse: serve refuses, by default, each unsafe setting
// of the secure defaults, naming the setting and the value that opts in on purpose;
// SECKILL_STRICT=false (or the opt-in named) accepts it.
func TestSecureDefaultsRefuse(t *testing.T) {
	payments := map[string]string{"SECKILL_PAYMENT_URL": "https://pay.example", "SECKILL_PAYMENT_SECRET": secret32, "SECKILL_PAYMENT_MERCHANT_ID": "m-1"}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		names []string // in the error: the setting and the opt-in
		optIn map[string]string
	}{
		{"no user check", map[string]string{"SECKILL_USERCHECK_URL": ""}, []string{"SECKILL_USERCHECK_URL", "SECKILL_USERCHECK=approve-all"}, map[string]string{"SECKILL_USERCHECK": "approve-all"}},
		{"public listener, no identity", map[string]string{"SECKILL_HTTP_ADDR": ":8080"}, []string{"SECKILL_IDENTITY_SECRET", "SECKILL_IDENTITY=trusted-gateway"}, map[string]string{"SECKILL_IDENTITY": "trusted-gateway"}},
		{"public address, no identity", map[string]string{"SECKILL_HTTP_ADDR": "10.0.0.5:8080"}, []string{"SECKILL_IDENTITY_SECRET", "SECKILL_IDENTITY=trusted-gateway"}, map[string]string{"SECKILL_IDENTITY_SECRET": secret32}},
		{"short identity secret", map[string]string{"SECKILL_IDENTITY_SECRET": "gateway-identity-secret"}, []string{"SECKILL_IDENTITY_SECRET", "SECKILL_STRICT=false"}, nil},
		{"payments without a merchant", with(payments, "SECKILL_PAYMENT_MERCHANT_ID", ""), []string{"SECKILL_PAYMENT_MERCHANT_ID", "SECKILL_STRICT=false"}, nil},
		{"short payment secret", with(payments, "SECKILL_PAYMENT_SECRET", "abc"), []string{"SECKILL_PAYMENT_SECRET", "SECKILL_STRICT=false"}, nil},
		{"short previous payment secret", with(payments, "SECKILL_PAYMENT_SECRET_PREVIOUS", "old-payment-secret"), []string{"SECKILL_PAYMENT_SECRET_PREVIOUS", "SECKILL_STRICT=false"}, nil},
		{"short admin token", map[string]string{"SECKILL_ADMIN_TOKEN": "short"}, []string{"SECKILL_ADMIN_TOKEN", "SECKILL_STRICT=false"}, nil},
		{"admin token of one character", map[string]string{"SECKILL_ADMIN_TOKEN": strings.Repeat("a", 40)}, []string{"SECKILL_ADMIN_TOKEN", "SECKILL_STRICT=false"}, nil},
		{"body-only callbacks", map[string]string{"SECKILL_PAYMENT_REQUIRE_TIMESTAMP": "false"}, []string{"SECKILL_PAYMENT_REQUIRE_TIMESTAMP=false", "SECKILL_STRICT=false"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadServe(serveEnv(tc.env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, n := range tc.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
			if strings.Contains(err.Error(), secret32) || strings.Contains(err.Error(), "gateway-identity-secret") {
				t.Errorf("a secret in the error: %v", err)
			}
			optIns := []map[string]string{{"SECKILL_STRICT": "false"}}
			if tc.optIn != nil {
				optIns = append(optIns, tc.optIn)
			}
			for _, o := range optIns {
				if _, err := loadServe(serveEnv(with(with(tc.env), flatten(o)...))); err != nil {
					t.Errorf("with %v: %v", o, err)
				}
			}
		})
	}
	// The embedded demo keeps its conveniences.
	if _, err := loadServe(func(k string) string {
		return map[string]string{"SECKILL_ADMIN_TOKEN": "short", "SECKILL_PAYMENT_REQUIRE_TIMESTAMP": "false"}[k]
	}); err != nil {
		t.Errorf("demo: %v", err)
	}
}

func flatten(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return kv
}

// TestSecureDefaultsAccept: a production configuration starts with version
// 2 signatures only, timestamped callbacks only and prices required;
// SECKILL_STRICT=false restores the earlier defaults.
func TestSecureDefaultsAccept(t *testing.T) {
	prod := map[string]string{
		"SECKILL_HTTP_ADDR": ":8080", "SECKILL_IDENTITY_SECRET": secret32, "SECKILL_ADMIN_TOKEN": token16,
		"SECKILL_PAYMENT_URL": "https://pay.example", "SECKILL_PAYMENT_SECRET": secret32, "SECKILL_PAYMENT_MERCHANT_ID": "m-1",
	}
	cfg, err := loadServe(serveEnv(prod))
	if err != nil || !cfg.Strict || cfg.IdentityLegacy || !cfg.PaymentRequireTimestamp || !cfg.requirePrice() || cfg.RatePerUserReads != 20 {
		t.Fatalf("%v; strict %v, legacy %v, timestamp %v, price %v, reads %v", err, cfg.Strict, cfg.IdentityLegacy, cfg.PaymentRequireTimestamp, cfg.requirePrice(), cfg.RatePerUserReads)
	}
	prod["SECKILL_STRICT"] = "false"
	cfg, err = loadServe(serveEnv(prod))
	if err != nil || cfg.Strict || !cfg.IdentityLegacy || cfg.PaymentRequireTimestamp || cfg.requirePrice() {
		t.Fatalf("SECKILL_STRICT=false: %v; legacy %v, timestamp %v, price %v", err, cfg.IdentityLegacy, cfg.PaymentRequireTimestamp, cfg.requirePrice())
	}
	for _, bad := range []map[string]string{{"SECKILL_IDENTITY": "gateway"}, {"SECKILL_IDENTITY": "trusted-gateway", "SECKILL_IDENTITY_SECRET": secret32}} {
		if _, err := loadServe(serveEnv(bad)); err == nil || !strings.Contains(err.Error(), "SECKILL_IDENTITY") {
			t.Errorf("%v: %v, want a refusal naming SECKILL_IDENTITY", bad, err)
		}
	}
}

// warnings are the WARN lines logSecurity writes for cfg.
func warnings(t *testing.T, f func(*slog.Logger)) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	f(slog.New(slog.NewJSONHandler(&buf, nil)))
	var warns []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if rec["level"] == "WARN" {
			warns = append(warns, rec)
		}
	}
	return warns
}

// TestStrictFalseOneWarning: SECKILL_STRICT=false logs one warning naming
// each unsafe default in force; under the secure defaults each opt-out
// has its warning.
func TestStrictFalseOneWarning(t *testing.T) {
	cfg, err := loadServe(serveEnv(map[string]string{
		"SECKILL_STRICT": "false", "SECKILL_HTTP_ADDR": ":8080", "SECKILL_USERCHECK_URL": "", "SECKILL_ADMIN_TOKEN": "short",
		"SECKILL_PAYMENT_URL": "https://pay.example", "SECKILL_PAYMENT_SECRET": "abc",
	}))
	if err != nil {
		t.Fatal(err)
	}
	warns := warnings(t, func(log *slog.Logger) { logSecurity(cfg, log) })
	if len(warns) != 1 {
		t.Fatalf("%d warnings, want 1: %v", len(warns), warns)
	}
	msg := warns[0]["msg"].(string)
	for _, name := range []string{"SECKILL_STRICT=false", "SECKILL_USERCHECK_URL", "SECKILL_IDENTITY_SECRET", "SECKILL_PAYMENT_MERCHANT_ID",
		"without a price", "SECKILL_PAYMENT_REQUIRE_TIMESTAMP", "SECKILL_ADMIN_TOKEN", "SECKILL_PAYMENT_SECRET"} {
		if !strings.Contains(msg, name) {
			t.Errorf("the warning does not name %s: %s", name, msg)
		}
	}
	// Under the secure defaults, each opt-out set on purpose is a warning.
	cfg, err = loadServe(serveEnv(map[string]string{"SECKILL_HTTP_ADDR": ":8080", "SECKILL_ADMIN_ADDR": "127.0.0.1:9091", "SECKILL_IDENTITY": "trusted-gateway", "SECKILL_USERCHECK_URL": "", "SECKILL_USERCHECK": "approve-all"}))
	if err != nil {
		t.Fatal(err)
	}
	warns = warnings(t, func(log *slog.Logger) { logSecurity(cfg, log) })
	// In the table's order: the settings' own order in `seckill settings`.
	if len(warns) != 2 || warns[0]["variable"] != "SECKILL_USERCHECK" || warns[1]["variable"] != "SECKILL_IDENTITY" {
		t.Fatalf("opt-outs' warnings: %v", warns)
	}
}

// TestUnknownVarWarned: a SECKILL_* variable the service does not read is
// a warning naming the closest known one, never showing its value.
func TestUnknownVarWarned(t *testing.T) {
	warns := warnings(t, func(log *slog.Logger) {
		warnUnknownVars([]string{"SECKILL_STRCT=false", "SECKILL_STRICT=true", "SECKILL_RATE_PER_USER_READ=5", "SECKILL_DB_PASSWORD=x", "HOME=/root"}, log)
	})
	if len(warns) != 2 {
		t.Fatalf("%d warnings, want 2: %v", len(warns), warns)
	}
	for i, want := range [][2]string{{"SECKILL_STRCT", "SECKILL_STRICT"}, {"SECKILL_RATE_PER_USER_READ", "SECKILL_RATE_PER_USER_READS"}} {
		if warns[i]["variable"] != want[0] || warns[i]["closest"] != want[1] || !strings.Contains(warns[i]["msg"].(string), want[1]) {
			t.Errorf("warning %v, want %s named with %s", warns[i], want[0], want[1])
		}
	}
}

// pendingBlockRedisCredentials: docs/DEPLOY.md's production block still
// names a Redis without credentials, which the secure defaults refuse on a
// host that is not loopback; until its rewrite gives the URL a user and
// password, TestProductionBlockStarts lends it some.
const pendingBlockRedisCredentials = true

// TestProductionBlockStarts: docs/DEPLOY.md's production settings, each
// $SECRET standing for a 32-byte secret, are accepted by serve's secure
// defaults as written.
func TestProductionBlockStarts(t *testing.T) {
	doc, err := os.ReadFile("../../docs/DEPLOY.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "**Production settings.**")
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), `\`)
		name, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			if line != "seckill serve" {
				t.Fatalf("the block does not end with seckill serve: %q", line)
			}
			continue
		}
		value = strings.Trim(value, `'"`)
		if strings.HasPrefix(value, "$") {
			value = secret32
		}
		env[name] = value
	}
	if len(env) < 10 {
		t.Fatalf("read %d settings from the block:\n%s", len(env), block)
	}
	switch hasCredentials := strings.Contains(env["SECKILL_REDIS_URL"], "@"); {
	case pendingBlockRedisCredentials && hasCredentials:
		t.Errorf("docs/DEPLOY.md's production block gives SECKILL_REDIS_URL credentials now: set pendingBlockRedisCredentials to false")
	case pendingBlockRedisCredentials:
		env["SECKILL_REDIS_URL"] = strings.Replace(env["SECKILL_REDIS_URL"], "redis://", "redis://seckill:"+secret32+"@", 1)
	}
	if _, err := loadServe(func(k string) string { return env[k] }); err != nil {
		t.Fatalf("the production block is refused: %v", err)
	}
}
