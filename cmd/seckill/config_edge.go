package main

import (
	"errors"
	"fmt"
	"log/slog"
)

// minIdentitySecret is the shortest SECKILL_IDENTITY_SECRET accepted: one
// signed header is enough to guess a short key offline.
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
	c.IdentityLegacy = e.boolean("SECKILL_IDENTITY_LEGACY", "true")
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

// logIdentityMode says at start-up how the buyer's identity is taken:
// gateway-signed with SECKILL_IDENTITY_SECRET, else the
// X-User-ID header trusted as the gateway set it. A trusted X-User-ID on a
// listener that is not loopback-only is a warning: anything that reaches the
// port can buy as anyone unless the gateway is the only way in.
func logIdentityMode(cfg config, log *slog.Logger) {
	if cfg.IdentitySecret != "" {
		log.Info("identity: "+identityGatewaySigned, "identity_mode", identityGatewaySigned, "legacy_signature", cfg.IdentityLegacy)
		return
	}
	log.Info("identity: "+identityTrusted, "identity_mode", identityTrusted)
	if !loopbackAddr(cfg.HTTPAddr) {
		log.Warn("identity: X-User-ID is trusted unsigned on a listener that is not loopback-only: "+
			"only the gateway, which strips a client's X-User-ID, may reach it; where that cannot be guaranteed "+
			"set SECKILL_IDENTITY_SECRET (see the trust boundary in docs/DEPLOY.md, Security)",
			"identity_mode", identityTrusted, "addr", cfg.HTTPAddr, "variable", "SECKILL_IDENTITY_SECRET")
	}
}
