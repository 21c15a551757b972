package main

import (
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
