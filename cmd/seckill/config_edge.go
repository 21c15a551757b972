package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// minIdentitySecret is the shortest SECKILL_IDENTITY_SECRET accepted even
// with SECKILL_STRICT=false: one signed header is enough to guess a short
// key offline (the secure defaults want minStrictSecret).
const minIdentitySecret = 16

// edgeSecrets reads the secrets of the HTTP edge's optional checks (docs/API.md
// "Configuration"): the payment secret being rotated out and the gateway's
// identity secret. Their values are never logged.
func (c *config) edgeSecrets(e *envReader) {
	c.PaymentSecretPrevious = e.get("SECKILL_PAYMENT_SECRET_PREVIOUS")
	if c.PaymentSecretPrevious != "" && e.get("SECKILL_PAYMENT_SECRET") == "" {
		e.fail(errors.New("SECKILL_PAYMENT_SECRET_PREVIOUS is set without SECKILL_PAYMENT_SECRET: during a rotation both are set, the new one in SECKILL_PAYMENT_SECRET"))
	}
	c.IdentitySecret = e.get("SECKILL_IDENTITY_SECRET")
	if c.IdentitySecret != "" && len(c.IdentitySecret) < minIdentitySecret {
		e.fail(fmt.Errorf("SECKILL_IDENTITY_SECRET is %d bytes: it must be at least %d (or unset: the gateway's X-User-ID is trusted unsigned)", len(c.IdentitySecret), minIdentitySecret))
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

// warnOptOuts warns of each opt-out of the secure defaults set on purpose.
func warnOptOuts(cfg config, log *slog.Logger) {
	if cfg.TrustedGateway && !loopbackAddr(cfg.HTTPAddr) {
		log.Warn("SECKILL_IDENTITY=trusted-gateway: X-User-ID is trusted unsigned on a listener that is not loopback-only: "+
			"only the gateway, which strips a client's X-User-ID, may reach it (see the trust boundary in docs/DEPLOY.md, Security)",
			"variable", "SECKILL_IDENTITY", "addr", cfg.HTTPAddr)
	}
	if cfg.ApproveAll {
		log.Warn("SECKILL_USERCHECK=approve-all: every buyer is approved without verification, on purpose", "variable", "SECKILL_USERCHECK")
	}
	if cfg.IdentitySecret != "" && cfg.IdentityLegacy {
		log.Warn("SECKILL_IDENTITY_LEGACY=true: the legacy identity signature, replayable across routes for its lifetime, is accepted",
			"variable", "SECKILL_IDENTITY_LEGACY")
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
			log.Warn(s.name+" is shorter than the recommended minimum: use at least 16 random bytes (openssl rand -hex 16)",
				"variable", s.name, "min_bytes", minSecretLen)
		}
	}
}
