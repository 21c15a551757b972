package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestEdgeSecretsConfig: the identity secret and the previous payment
// secret are read, and values that cannot work stop start-up naming them.
func TestEdgeSecretsConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := loadConfig(env(map[string]string{
		"SECKILL_PAYMENT_SECRET": "new-payment-secret", "SECKILL_PAYMENT_SECRET_PREVIOUS": "old-payment-secret",
		"SECKILL_IDENTITY_SECRET": "gateway-identity-secret",
	}))
	if err != nil || c.PaymentSecretPrevious != "old-payment-secret" || c.IdentitySecret != "gateway-identity-secret" {
		t.Fatalf("loadConfig = %+v, %v", c, err)
	}
	if got := string(apiConfig(c).IdentitySecret); got != "gateway-identity-secret" {
		t.Errorf("the HTTP edge got identity secret %q", got)
	}
	if unset, _ := loadConfig(env(map[string]string{})); apiConfig(unset).IdentitySecret != nil {
		t.Error("an unset SECKILL_IDENTITY_SECRET reached the HTTP edge as a secret")
	}
	// The secure defaults: the legacy signature is refused unless turned on, or
	// SECKILL_STRICT=false.
	if !apiConfig(c).IdentityRejectLegacy {
		t.Error("the legacy identity signature is accepted by default")
	}
	for _, on := range []map[string]string{{"SECKILL_IDENTITY_LEGACY": "true"}, {"SECKILL_STRICT": "false"}} {
		on["SECKILL_IDENTITY_SECRET"] = "gateway-identity-secret"
		legacy, err := loadConfig(env(on))
		if err != nil || apiConfig(legacy).IdentityRejectLegacy {
			t.Errorf("%v: %v, reject legacy %v", on, err, apiConfig(legacy).IdentityRejectLegacy)
		}
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"short identity secret":             {map[string]string{"SECKILL_IDENTITY_SECRET": "short"}, "SECKILL_IDENTITY_SECRET"},
		"identity legacy not a bool":        {map[string]string{"SECKILL_IDENTITY_LEGACY": "maybe"}, "SECKILL_IDENTITY_LEGACY"},
		"previous secret without a current": {map[string]string{"SECKILL_PAYMENT_SECRET_PREVIOUS": "old-payment-secret"}, "SECKILL_PAYMENT_SECRET_PREVIOUS"},
	} {
		if _, err := loadConfig(env(tc.env)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.want)
		}
	}
}

// TestIdentityModeLogged: start-up names the identity mode, and warns about
// a trusted X-User-ID on a listener that is not loopback-only: under the
// secure defaults SECKILL_IDENTITY=trusted-gateway's warning names the
// trust boundary in docs/DEPLOY.md, under SECKILL_STRICT=false
// the one warning names SECKILL_IDENTITY_SECRET.
func TestIdentityModeLogged(t *testing.T) {
	type line struct {
		Level, Msg, Variable string
		Mode                 string `json:"identity_mode"`
	}
	logged := func(cfg config) []line {
		var buf bytes.Buffer
		logSecurity(cfg, slog.New(slog.NewJSONHandler(&buf, nil)))
		var lines []line
		dec := json.NewDecoder(&buf)
		for dec.More() {
			var l line
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		return lines
	}
	for _, tc := range []struct {
		name     string
		cfg      config
		mode     string
		warnings int
		variable string // of the warning
		says     string // in the warning
	}{
		{"signed, public", config{HTTPAddr: ":8080", AdminAddr: "127.0.0.1:9091", IdentitySecret: "gateway-identity-secret-0123456789", Strict: true, RedisURL: "r", UserCheckURL: "u"}, "gateway-signed", 0, "", ""},
		{"trusted gateway, every interface", config{HTTPAddr: ":8080", AdminAddr: "127.0.0.1:9091", TrustedGateway: true, Strict: true, RedisURL: "r", UserCheckURL: "u"}, "trusted X-User-ID", 1, "SECKILL_IDENTITY", "docs/DEPLOY.md"},
		{"trusted gateway, a public address", config{HTTPAddr: "10.0.0.5:8080", AdminAddr: "127.0.0.1:9091", TrustedGateway: true, Strict: true, RedisURL: "r", UserCheckURL: "u"}, "trusted X-User-ID", 1, "SECKILL_IDENTITY", "docs/DEPLOY.md"},
		{"not strict, every interface", config{HTTPAddr: ":8080", RedisURL: "r", UserCheckURL: "u"}, "trusted X-User-ID", 1, "SECKILL_STRICT", "SECKILL_IDENTITY_SECRET"},
		{"trusted, loopback", config{HTTPAddr: "127.0.0.1:8080", Strict: true, RedisURL: "r", UserCheckURL: "u"}, "trusted X-User-ID", 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := logged(tc.cfg)
			if len(lines) == 0 || lines[0].Level != "INFO" || lines[0].Mode != tc.mode || !strings.Contains(lines[0].Msg, tc.mode) {
				t.Fatalf("first line %+v, want INFO naming %q", lines, tc.mode)
			}
			var warns []line
			for _, l := range lines[1:] {
				if l.Level == "WARN" {
					warns = append(warns, l)
				}
			}
			if len(warns) != tc.warnings {
				t.Fatalf("%d warnings, want %d: %+v", len(warns), tc.warnings, lines)
			}
			for _, w := range warns {
				if !strings.Contains(w.Msg, tc.says) || w.Variable != tc.variable {
					t.Errorf("warning %+v does not name %s and say %s", w, tc.variable, tc.says)
				}
			}
		})
	}
}
