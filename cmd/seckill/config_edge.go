package main

import (
	"errors"
	"fmt"
	"strconv"
)

// minIdentitySecret is the shortest SECKILL_IDENTITY_SECRET accepted: one
// signed header is enough to guess a short key offline.
const minIdentitySecret = 16

// edgeSecrets reads the secrets of the HTTP edge's optional checks (docs/API.md
// "Configuration"): the payment secret being rotated out and the gateway's
// identity secret. Their values are never logged.
func (c *config) edgeSecrets(getenv func(string) string) []error {
	var errs []error
	c.PaymentSecretPrevious = getenv("SECKILL_PAYMENT_SECRET_PREVIOUS")
	if c.PaymentSecretPrevious != "" && getenv("SECKILL_PAYMENT_SECRET") == "" {
		errs = append(errs, errors.New("SECKILL_PAYMENT_SECRET_PREVIOUS is set without SECKILL_PAYMENT_SECRET: during a rotation both are set, the new one in SECKILL_PAYMENT_SECRET"))
	}
	c.IdentitySecret = getenv("SECKILL_IDENTITY_SECRET")
	if c.IdentitySecret != "" && len(c.IdentitySecret) < minIdentitySecret {
		errs = append(errs, fmt.Errorf("SECKILL_IDENTITY_SECRET is %d bytes: it must be at least %d (or unset: the gateway's X-User-ID is trusted unsigned)", len(c.IdentitySecret), minIdentitySecret))
	}
	legacy := envOr(getenv, "SECKILL_IDENTITY_LEGACY", "true")
	if b, err := strconv.ParseBool(legacy); err != nil {
		errs = append(errs, fmt.Errorf("SECKILL_IDENTITY_LEGACY=%q: must be true or false", legacy))
	} else {
		c.IdentityLegacy = b
	}
	return errs
}

// identitySecret is SECKILL_IDENTITY_SECRET as the HTTP edge takes it: nil
// when unset.
func identitySecret(c config) []byte {
	if c.IdentitySecret == "" {
		return nil
	}
	return []byte(c.IdentitySecret)
}
