package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The secure defaults (docs/API.md, "Secure defaults (extension of
// 2026-11-27)") are serve's unless SECKILL_STRICT=false:
//   - serve refuses to start without SECKILL_USERCHECK_URL, unless
//     SECKILL_USERCHECK=approve-all says every buyer is approved on purpose;
//   - on a public listener that is not loopback, serve refuses to start
//     without SECKILL_IDENTITY_SECRET, unless SECKILL_IDENTITY=trusted-gateway
//     says only the gateway reaches the port; with a secret only the
//     versioned signatures (3, and 2 without a body) are accepted
//     (SECKILL_IDENTITY_LEGACY false);
//   - with payments on, SECKILL_PAYMENT_MERCHANT_ID is required (a payment
//     to another merchant account carrying the order id is refused);
//   - SECKILL_ADMIN_TOKEN must be at least 16 bytes and not one repeated
//     character, the payment and identity secrets at least 32 bytes;
//   - callbacks must carry the timestamped signature
//     (SECKILL_PAYMENT_REQUIRE_TIMESTAMP true, false refused);
//   - with payments on, an activity must have a price (creating one
//     without, or removing it, is 400), and a paid answer for an order
//     without one is refund_required (no_price), never paid.
// The embedded demo ignores them: it is a throwaway on loopback.

// identityTrustedGateway is SECKILL_IDENTITY's one value: X-User-ID is
// trusted unsigned on purpose, since only the gateway reaches the port.
const identityTrustedGateway = "trusted-gateway"

// minStrictSecret is the shortest payment or identity secret the secure
// defaults accept: 32 bytes, what `openssl rand -hex 16` prints.
const minStrictSecret = 32

// strictOff is the opt-out every refusal names.
const strictOff = "SECKILL_STRICT=false"

// strictness reads SECKILL_STRICT and the settings whose defaults it
// decides. What the secure defaults refuse, serve refuses (checkSecure):
// the other commands (migrate, reconcile, ...) read the same configuration
// but serve no buyer.
func (c *config) strictness(e *envReader) {
	c.Strict = e.boolean("SECKILL_STRICT", "true")
	switch v := e.get("SECKILL_USERCHECK"); v {
	case "":
	case "approve-all":
		c.ApproveAll = true
	default:
		e.fail(fmt.Errorf("SECKILL_USERCHECK=%q: the only value is approve-all", v))
	}
	switch v := e.get("SECKILL_IDENTITY"); v {
	case "":
	case identityTrustedGateway:
		c.TrustedGateway = true
		if c.IdentitySecret != "" {
			e.fail(errors.New("SECKILL_IDENTITY=trusted-gateway and SECKILL_IDENTITY_SECRET are both set: with a secret X-User-ID is signed, not trusted; unset one"))
		}
	default:
		e.fail(fmt.Errorf("SECKILL_IDENTITY=%q: the only value is %s (X-User-ID trusted unsigned: only the gateway reaches the port)", v, identityTrustedGateway))
	}
	c.IdentityLegacy = e.boolean("SECKILL_IDENTITY_LEGACY", strconv.FormatBool(!c.Strict))
	c.PaymentRequireTimestamp = e.boolean("SECKILL_PAYMENT_REQUIRE_TIMESTAMP", strconv.FormatBool(c.Strict))
}

// checkSecure refuses what the secure defaults do not allow, each error
// naming its setting and the value that opts in on purpose; nil with
// SECKILL_STRICT=false and in the demo.
func (c config) checkSecure() error {
	if !c.Strict || c.embedded() {
		return nil
	}
	var errs []error
	if c.UserCheckURL == "" && !c.ApproveAll {
		errs = append(errs, errors.New("SECKILL_USERCHECK_URL is unset: set it to the user-verification service, or SECKILL_USERCHECK=approve-all to approve every buyer on purpose (or "+strictOff+")"))
	}
	if !loopbackAddr(c.HTTPAddr) && c.IdentitySecret == "" && !c.TrustedGateway {
		errs = append(errs, fmt.Errorf("SECKILL_IDENTITY_SECRET is unset and SECKILL_HTTP_ADDR=%q is not loopback: anyone who reaches the port could act as any buyer; set SECKILL_IDENTITY_SECRET to the gateway's signing secret, or SECKILL_IDENTITY=%s if only the gateway reaches the port (or %s)", c.HTTPAddr, identityTrustedGateway, strictOff))
	}
	if c.PaymentURL != "" && c.PaymentMerchantID == "" {
		errs = append(errs, errors.New("SECKILL_PAYMENT_MERCHANT_ID is required when SECKILL_PAYMENT_URL is set: a paid answer must name this service's merchant (or "+strictOff+")"))
	}
	if weakAdminToken(c.AdminToken) {
		errs = append(errs, fmt.Errorf("SECKILL_ADMIN_TOKEN is shorter than %d bytes or one repeated character: use at least 16 random bytes, openssl rand -hex 16 (or %s)", minSecretLen, strictOff))
	}
	for _, s := range c.strictSecrets() {
		if s.value != "" && len(s.value) < minStrictSecret {
			errs = append(errs, fmt.Errorf("%s is %d bytes: it must be at least %d, openssl rand -hex 16 (or %s)", s.name, len(s.value), minStrictSecret, strictOff))
		}
	}
	if !c.PaymentRequireTimestamp { // false only when set so: true is the default here
		errs = append(errs, errors.New("SECKILL_PAYMENT_REQUIRE_TIMESTAMP=false accepts callbacks signed over the body alone, which a captured callback replays: it needs "+strictOff+" as well"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// strictSecrets are the secrets the secure defaults want 32 bytes long.
func (c config) strictSecrets() []struct{ name, value string } {
	return []struct{ name, value string }{
		{"SECKILL_PAYMENT_SECRET", c.PaymentSecret},
		{"SECKILL_PAYMENT_SECRET_PREVIOUS", c.PaymentSecretPrevious},
		{"SECKILL_IDENTITY_SECRET", c.IdentitySecret},
	}
}

// weakAdminToken reports whether a set admin token is shorter than
// minSecretLen or one character repeated (aaaaaaaaaaaaaaaa).
func weakAdminToken(token string) bool {
	return token != "" && (len(token) < minSecretLen || strings.Count(token, token[:1]) == len(token))
}

// relaxed reports whether serve runs with SECKILL_STRICT=false: the earlier
// defaults, with one warning naming the unsafe ones in force.
func (c config) relaxed() bool { return !c.Strict && !c.embedded() }

// unsafeDefaults names each unsafe default in force under
// SECKILL_STRICT=false, for its one warning.
func (c config) unsafeDefaults() []string {
	var u []string
	add := func(on bool, what string) {
		if on {
			u = append(u, what)
		}
	}
	add(c.UserCheckURL == "" && !c.ApproveAll, "SECKILL_USERCHECK_URL unset: every buyer approved")
	add(!loopbackAddr(c.HTTPAddr) && c.IdentitySecret == "" && !c.TrustedGateway, "SECKILL_IDENTITY_SECRET unset on a listener that is not loopback: X-User-ID trusted unsigned")
	add(c.IdentitySecret != "" && c.IdentityLegacy, "SECKILL_IDENTITY_LEGACY=true: the legacy identity signature, replayable across routes, accepted")
	add(c.PaymentURL != "" && c.PaymentMerchantID == "", "SECKILL_PAYMENT_MERCHANT_ID unset: a payment's merchant not checked")
	add(c.PaymentURL != "", "SECKILL_PAYMENT_URL set: activities without a price accepted, and their orders paid by any payment")
	add(c.PaymentURL != "" && !c.PaymentRequireTimestamp, "SECKILL_PAYMENT_REQUIRE_TIMESTAMP=false: callbacks signed over the body alone accepted")
	add(weakAdminToken(c.AdminToken), "SECKILL_ADMIN_TOKEN shorter than 16 bytes or one repeated character")
	for _, s := range c.strictSecrets() {
		add(s.value != "" && len(s.value) < minStrictSecret, s.name+" shorter than 32 bytes")
	}
	return u
}

// requirePrice reports whether activities must have a price: the secure
// defaults with payments on.
func (c config) requirePrice() bool { return c.Strict && !c.embedded() && c.PaymentURL != "" }
