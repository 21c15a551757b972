package main

import (
	"errors"
	"fmt"
	"log/slog"
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

// secureRules are the secure defaults of serve, each stated once, beside
// its setting in the table of settings (setting.secure). The embedded
// demo, on loopback, ignores them.
func secureRules() []secureRule {
	var rules []secureRule
	for _, s := range settingsTable {
		rules = append(rules, s.rules...)
	}
	return rules
}

// when is what if on, else "".
func when(on bool, what string) string {
	if on {
		return what
	}
	return ""
}

// secret refuses a set value of the setting that weakSecret finds weak.
func (s setting) secret(minLen int, value func(c config) string) setting {
	name := s.name
	return s.secure(refuse, func(c config) string {
		v := value(c)
		if v == "" {
			return ""
		}
		return when(weakSecret(v, minLen) != "", fmt.Sprintf("%s %s: a secret needs at least %d bytes, at least %d different characters and no block of up to %d characters repeated; %s",
			name, weakSecret(v, minLen), minLen, minDistinct, maxRepeatedBlock, secretRecipe))
	})
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

// offWarned warns of the setting, a rate limit, set to 0 on purpose.
func (s setting) offWarned(value func(c config) float64) setting {
	name := s.name
	return s.secure(warn, func(c config) string {
		return when(c.set[name] && value(c) == 0, name+"=0: this limit is off")
	})
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
	for _, r := range secureRules() {
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
	for _, r := range secureRules() {
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
	for _, r := range secureRules() {
		if what := r.unsafe(c); what != "" {
			u = append(u, what)
		}
	}
	return u
}

// requirePrice reports whether activities must have a price: the secure
// defaults with payments on.
func (c config) requirePrice() bool { return c.Strict && !c.embedded() && c.PaymentURL != "" }

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

// warnOptOuts logs the secure defaults' warnings (secureRules), one for
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
