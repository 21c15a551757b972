package main

import (
	"net/http"
	"testing"
)

// TestPaystubConfigLocked: `seckill paystub` runs on its own port, so
// changing where its signed callbacks go needs SECKILL_ADMIN_TOKEN as a
// bearer token (403 when none is configured), while paying an order stays
// open.
func TestPaystubConfigLocked(t *testing.T) {
	const cfg = `{"latency":"0s","fail_rate":0,"callback_url":"http://127.0.0.1:1"}`
	env := map[string]string{"SECKILL_PAYMENT_SECRET": "paystub-secret-0123456789"}
	p := start(t, env, "paystub", "-addr", "127.0.0.1:0")
	base := "http://" + p.addr()
	if code, _ := call(t, "PUT", base+"/stub/config", nil, cfg); code != http.StatusForbidden {
		t.Errorf("no SECKILL_ADMIN_TOKEN: PUT /stub/config = %d, want 403", code)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-1", nil, `{"status":"paid"}`); code != http.StatusAccepted {
		t.Errorf("PUT /stub/payments/o-1 = %d, want 202", code)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}

	env["SECKILL_ADMIN_TOKEN"] = "paystub-admin-0123456789"
	p = start(t, env, "paystub", "-addr", "127.0.0.1:0")
	base = "http://" + p.addr()
	if code, _ := call(t, "PUT", base+"/stub/config", nil, cfg); code != http.StatusUnauthorized {
		t.Errorf("without the token: PUT /stub/config = %d, want 401", code)
	}
	auth := map[string]string{"Authorization": "Bearer paystub-admin-0123456789"}
	if code, v := call(t, "PUT", base+"/stub/config", auth, cfg); code != http.StatusOK || v["callback_url"] != "http://127.0.0.1:1" {
		t.Errorf("with the token: PUT /stub/config = %d %v, want 200 and the new callback URL", code, v)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
}
