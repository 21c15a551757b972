package main

import (
	"fmt"
	"log/slog"
	"strings"
)

// minIdentitySecret is the shortest SECKILL_IDENTITY_SECRET accepted even
// with SECKILL_STRICT=false: one signed header is enough to guess a short
// key offline (the secure defaults want minStrictSecret).
const minIdentitySecret = 16

// readIdentitySecret reads the gateway's identity secret, never logged.
func readIdentitySecret(c *config, e *envReader, v string) {
	c.IdentitySecret = v
	if v != "" && len(v) < minIdentitySecret {
		e.fail(fmt.Errorf("SECKILL_IDENTITY_SECRET is %d bytes: it must be at least %d (or unset: the gateway's X-User-ID is trusted unsigned)", len(v), minIdentitySecret))
	}
}

// identitySecret is SECKILL_IDENTITY_SECRET as the HTTP edge takes it: nil
// when unset.
func identitySecret(c config) []byte {
	if c.IdentitySecret == "" {
		return nil
	}
	return []byte(c.IdentitySecret)
}

// Identity modes, as logged at start-up.
const (
	identityGatewaySigned = "gateway-signed"
	identityTrusted       = "trusted X-User-ID"
)

// logSecurity says at start-up how the buyer's identity is taken, and warns
// of what is unsafe: under SECKILL_STRICT=false one warning naming each
// unsafe default in force; under the secure defaults one warning for each
// opt-out set on purpose; in the demo, a short secret.
func logSecurity(cfg config, log *slog.Logger) {
	switch {
	case cfg.IdentitySecret != "":
		log.Info("identity: "+identityGatewaySigned, "identity_mode", identityGatewaySigned, "legacy_signature", cfg.IdentityLegacy)
	default:
		log.Info("identity: "+identityTrusted, "identity_mode", identityTrusted)
	}
	switch {
	case cfg.relaxed():
		if u := cfg.unsafeDefaults(); len(u) > 0 {
			log.Warn(strictOff+": unsafe defaults in force: "+strings.Join(u, "; "),
				"variable", "SECKILL_STRICT", "unsafe_defaults", u)
		}
	case cfg.embedded():
		warnShortSecrets(cfg, log)
	default:
		warnOptOuts(cfg, log)
	}
}

// warnOptOuts logs the secure defaults' warnings (strictRules), one for
// each that applies, naming its setting.
func warnOptOuts(cfg config, log *slog.Logger) {
	for _, w := range cfg.strictWarnings() {
		log.Warn(w[1], "variable", w[0])
	}
}

// warnShortSecrets logs a warning for each secret set shorter than
// minSecretLen, naming the variable, never its value: the demo runs with
// any secret it is given.
func warnShortSecrets(cfg config, log *slog.Logger) {
	for _, s := range []struct{ name, value string }{
		{"SECKILL_ADMIN_TOKEN", cfg.AdminToken},
		{"SECKILL_PAYMENT_SECRET", cfg.PaymentSecret},
	} {
		if s.value != "" && len(s.value) < minSecretLen {
			log.Warn(s.name+" is shorter than the recommended minimum: use at least 16 random bytes: "+secretRecipe,
				"variable", s.name, "min_bytes", minSecretLen)
		}
	}
}
