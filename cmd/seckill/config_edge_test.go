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
	// Issue 33: the legacy signature stays accepted unless turned off.
	if apiConfig(c).IdentityRejectLegacy {
		t.Error("the legacy identity signature is refused by default")
	}
	strict, err := loadConfig(env(map[string]string{"SECKILL_IDENTITY_SECRET": "gateway-identity-secret", "SECKILL_IDENTITY_LEGACY": "false"}))
	if err != nil || !apiConfig(strict).IdentityRejectLegacy {
		t.Errorf("SECKILL_IDENTITY_LEGACY=false: %v, reject legacy %v", err, apiConfig(strict).IdentityRejectLegacy)
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
// a trusted X-User-ID on a listener that is not loopback-only, naming
// SECKILL_IDENTITY_SECRET and the trust boundary in docs/DEPLOY.md (issue 33).
func TestIdentityModeLogged(t *testing.T) {
	type line struct {
		Level, Msg, Variable string
		Mode                 string `json:"identity_mode"`
	}
	logged := func(cfg config) []line {
		var buf bytes.Buffer
		logIdentityMode(cfg, slog.New(slog.NewJSONHandler(&buf, nil)))
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
	}{
		{"signed, public", config{HTTPAddr: ":8080", IdentitySecret: "gateway-identity-secret", IdentityLegacy: true}, "gateway-signed", 0},
		{"trusted, every interface", config{HTTPAddr: ":8080"}, "trusted X-User-ID", 1},
		{"trusted, a public address", config{HTTPAddr: "10.0.0.5:8080"}, "trusted X-User-ID", 1},
		{"trusted, loopback", config{HTTPAddr: "127.0.0.1:8080"}, "trusted X-User-ID", 0},
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
				if !strings.Contains(w.Msg, "SECKILL_IDENTITY_SECRET") || !strings.Contains(w.Msg, "docs/DEPLOY.md") || w.Variable != "SECKILL_IDENTITY_SECRET" {
					t.Errorf("warning %+v does not name SECKILL_IDENTITY_SECRET and docs/DEPLOY.md", w)
				}
			}
		})
	}
}
