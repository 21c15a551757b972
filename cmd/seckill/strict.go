package main

import (
	"errors"
	"fmt"
	"strings"
)

// identityTrustedGateway is SECKILL_IDENTITY's one value: X-User-ID is
// trusted unsigned on purpose, since only the gateway reaches the port.
const identityTrustedGateway = "trusted-gateway"

// minStrictSecret is the shortest payment or identity secret the secure
// defaults accept, in bytes of the variable's text.
const minStrictSecret = 32

// strictOff is the opt-out every refusal names.
const strictOff = "SECKILL_STRICT=false"

// secretRecipe is how every message says to make a secret.
const secretRecipe = "make one with `openssl rand -hex 32`"

func readUserCheck(c *config, e *envReader, v string) {
	switch v {
	case "":
	case "approve-all":
		c.ApproveAll = true
	default:
		e.fail(fmt.Errorf("SECKILL_USERCHECK=%q: the only value is approve-all", v))
	}
}

// readIdentity reads SECKILL_IDENTITY, after SECKILL_IDENTITY_SECRET.
func readIdentity(c *config, e *envReader, v string) {
	switch v {
	case "":
	case identityTrustedGateway:
		c.TrustedGateway = true
		if c.IdentitySecret != "" {
			e.fail(errors.New("SECKILL_IDENTITY=trusted-gateway and SECKILL_IDENTITY_SECRET are both set: with a secret X-User-ID is signed, not trusted; unset one"))
		}
	default:
		e.fail(fmt.Errorf("SECKILL_IDENTITY=%q: the only value is %s (X-User-ID trusted unsigned: only the gateway reaches the port)", v, identityTrustedGateway))
	}
}

// What a rule of the secure defaults does under them (with
// SECKILL_STRICT=false every rule that applies is named in one warning).
type strictAction int

const (
	refuse  strictAction = iota // serve refuses to start
	warn                        // a warning at start-up, naming the setting
	inForce                     // nothing: the secure defaults' behaviour makes it safe
)

// secureRule is one rule of the secure defaults: unsafe says, naming the
// setting, what is unsafe in c, and "" when nothing is.
type secureRule struct {
	name   string // the setting the rule is about
	action strictAction
	unsafe func(c config) string
}

// strictRules are the secure defaults of serve, each stated once. The
// embedded demo, on loopback, ignores them.
var strictRules = []secureRule{
	{"SECKILL_USERCHECK_URL", refuse, func(c config) string {
		return when(c.UserCheckURL == "" && !c.ApproveAll, "SECKILL_USERCHECK_URL is unset: every buyer would be approved; set it to the user-verification service, or SECKILL_USERCHECK=approve-all to approve every buyer on purpose")
	}},
	{"SECKILL_IDENTITY_SECRET", refuse, func(c config) string {
		return when(!loopbackAddr(c.HTTPAddr) && c.IdentitySecret == "" && !c.TrustedGateway, fmt.Sprintf("SECKILL_IDENTITY_SECRET is unset and SECKILL_HTTP_ADDR=%q is not loopback: anyone who reaches the port could act as any buyer; set SECKILL_IDENTITY_SECRET to the gateway's signing secret, or SECKILL_IDENTITY=%s if only the gateway reaches the port", c.HTTPAddr, identityTrustedGateway))
	}},
	{"SECKILL_PAYMENT_MERCHANT_ID", refuse, func(c config) string {
		return when(c.PaymentURL != "" && c.PaymentMerchantID == "", "SECKILL_PAYMENT_MERCHANT_ID is unset with SECKILL_PAYMENT_URL: a paid answer's merchant would not be checked")
	}},
	secretRule("SECKILL_ADMIN_TOKEN", minSecretLen, func(c config) string { return c.AdminToken }),
	secretRule("SECKILL_PAYMENT_SECRET", minStrictSecret, func(c config) string { return c.PaymentSecret }),
	secretRule("SECKILL_PAYMENT_SECRET_PREVIOUS", minStrictSecret, func(c config) string { return c.PaymentSecretPrevious }),
	secretRule("SECKILL_IDENTITY_SECRET", minStrictSecret, func(c config) string { return c.IdentitySecret }),
	// Under the secure defaults false is only ever set on purpose; with
	// SECKILL_STRICT=false it is the default, unsafe only with payments on.
	{"SECKILL_PAYMENT_REQUIRE_TIMESTAMP", refuse, func(c config) string {
		return when(!c.PaymentRequireTimestamp && (c.Strict || c.PaymentURL != ""), "SECKILL_PAYMENT_REQUIRE_TIMESTAMP=false accepts callbacks signed over the body alone, which a captured callback replays")
	}},
	{"SECKILL_REDIS_URL", refuse, redisWithoutCredentials},
	{"SECKILL_EVENTS_KAFKA_SASL_MECHANISM", refuse, kafkaPlainInClear},
	{"SECKILL_IDENTITY", warn, func(c config) string {
		return when(c.TrustedGateway && !loopbackAddr(c.HTTPAddr), "SECKILL_IDENTITY=trusted-gateway: X-User-ID is trusted unsigned on a listener that is not loopback-only: only the gateway, which strips a client's X-User-ID, may reach it (see the trust boundary in docs/DEPLOY.md, Security)")
	}},
	{"SECKILL_USERCHECK", warn, func(c config) string {
		return when(c.ApproveAll, "SECKILL_USERCHECK=approve-all: every buyer is approved without verification, on purpose")
	}},
	{"SECKILL_IDENTITY_LEGACY", warn, func(c config) string {
		return when(c.IdentitySecret != "" && c.IdentityLegacy, "SECKILL_IDENTITY_LEGACY=true: the legacy identity signature, replayable across routes for its lifetime, is accepted")
	}},
	{"SECKILL_PAYMENT_URL", inForce, func(c config) string {
		return when(c.PaymentURL != "", "SECKILL_PAYMENT_URL set: activities without a price accepted, and their orders paid by any payment")
	}},
	{"SECKILL_PAYMENT_ALLOW_HTTP", warn, plainHTTPProvider},
	rateOffRule("SECKILL_RATE_GLOBAL", func(c config) float64 { return c.RateGlobal }),
	rateOffRule("SECKILL_RATE_PER_USER", func(c config) float64 { return c.RatePerUser }),
	rateOffRule("SECKILL_RATE_PER_USER_READS", func(c config) float64 { return c.RatePerUserReads }),
	rateOffRule("SECKILL_RATE_JOINS_PER_ADDRESS", func(c config) float64 { return c.RateJoinsPerAddress }),
	{"SECKILL_ADMIN_ADDR", warn, func(c config) string {
		return when(c.AdminAddr == "" && !loopbackAddr(c.HTTPAddr), fmt.Sprintf("SECKILL_ADMIN_ADDR is unset and SECKILL_HTTP_ADDR=%q is not loopback: the admin API and /metrics are served on the public listener; set SECKILL_ADMIN_ADDR to a private address such as 127.0.0.1:9091", c.HTTPAddr))
	}},
}

// when is what if on, else "".
func when(on bool, what string) string {
	if on {
		return what
	}
	return ""
}

// secretRule refuses a set secret that weakSecret finds weak.
func secretRule(name string, minLen int, value func(c config) string) secureRule {
	return secureRule{name, refuse, func(c config) string {
		v := value(c)
		if v == "" {
			return ""
		}
		return when(weakSecret(v, minLen) != "", fmt.Sprintf("%s %s: a secret needs at least %d bytes, at least %d different characters and no block of up to %d characters repeated; %s",
			name, weakSecret(v, minLen), minLen, minDistinct, maxRepeatedBlock, secretRecipe))
	}}
}

// A secret's variety: what `openssl rand -hex 32` prints always has it; a
// 32-character aaaa... or abab..., or a short word repeated, never does.
const (
	minDistinct      = 8 // different characters (a third of a shorter secret's length)
	maxRepeatedBlock = 8
)

// weakSecret says what makes a secret weak, "" when nothing does: shorter
// than minLen bytes, fewer than minDistinct different characters (a third
// of its length when that is fewer), or one block of up to
// maxRepeatedBlock characters repeated. Never the value itself.
func weakSecret(v string, minLen int) string {
	distinct := map[rune]bool{}
	for _, r := range v {
		distinct[r] = true
	}
	switch want := min(minDistinct, len(v)/3); {
	case len(v) < minLen:
		return fmt.Sprintf("shorter than %d bytes", minLen)
	case len(distinct) < want:
		return fmt.Sprintf("with %d different characters, fewer than %d", len(distinct), want)
	}
	for p := 1; p <= maxRepeatedBlock && p < len(v); p++ {
		if v[p:] == v[:len(v)-p] {
			return fmt.Sprintf("repeating a block of %d characters", p)
		}
	}
	return ""
}

// rateOffRule warns of a rate limit set to 0 on purpose.
func rateOffRule(name string, value func(c config) float64) secureRule {
	return secureRule{name, warn, func(c config) string {
		return when(c.set[name] && value(c) == 0, name+"=0: this limit is off")
	}}
}

// plainHTTPProvider: a provider on the network over plain http, whose
// answers decide what is paid and whose queries carry the API key.
func plainHTTPProvider(c config) string {
	if !c.PaymentAllowHTTP || !strings.HasPrefix(strings.ToLower(c.PaymentURL), "http://") || loopbackURL(c.PaymentURL) {
		return ""
	}
	return "SECKILL_PAYMENT_ALLOW_HTTP=true: the payment provider (SECKILL_PAYMENT_URL) is reached over plain http on a host that is not loopback: its answers decide what is paid and its queries carry the API key; use https:// unless a trusted sidecar carries it"
}

// checkSecure refuses what the secure defaults do not allow, each error
// naming its setting and the value that opts in on purpose; nil with
// SECKILL_STRICT=false and in the demo.
func (c config) checkSecure() error {
	if !c.Strict || c.embedded() {
		return nil
	}
	var errs []error
	for _, r := range strictRules {
		if what := r.unsafe(c); r.action == refuse && what != "" {
			errs = append(errs, fmt.Errorf("%s (or %s)", what, strictOff))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// strictWarnings are the warnings of the secure defaults for c: setting
// and message.
func (c config) strictWarnings() [][2]string {
	var w [][2]string
	for _, r := range strictRules {
		if r.action != warn {
			continue
		}
		if what := r.unsafe(c); what != "" {
			w = append(w, [2]string{r.name, what})
		}
	}
	return w
}

// relaxed reports whether serve runs with SECKILL_STRICT=false: the earlier
// defaults, with one warning naming the unsafe ones in force.
func (c config) relaxed() bool { return !c.Strict && !c.embedded() }

// unsafeDefaults names each unsafe setting in force under
// SECKILL_STRICT=false, for its one warning.
func (c config) unsafeDefaults() []string {
	var u []string
	for _, r := range strictRules {
		if what := r.unsafe(c); what != "" {
			u = append(u, what)
		}
	}
	return u
}

// requirePrice reports whether activities must have a price: the secure
// defaults with payments on.
func (c config) requirePrice() bool { return c.Strict && !c.embedded() && c.PaymentURL != "" }
