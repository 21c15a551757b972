package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

// The stub commands: userstub and paystub.

func TestUserstub(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := start(t, nil, "userstub", "-addr", "127.0.0.1:0", "-reject-rate", "1")
	code, v := call(t, "GET", "http://"+p.addr()+"/v1/users/7/eligibility?activity_id=1", nil, "")
	if code != http.StatusOK || v["eligible"] != false {
		t.Fatalf("stub with -reject-rate 1: %d %v", code, v)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("userstub after cancel: %v", err)
	}

	err := run(context.Background(), []string{"seckill", "userstub", "-fail-rate", "2"}, func(string) string { return "" }, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("userstub -fail-rate 2 = %v, want a usage error", err)
	}
}

func TestPaystub(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := start(t, nil, "paystub", "-addr", "127.0.0.1:0")
	base := "http://" + p.addr()
	if code, _ := call(t, "GET", base+"/v1/payments/o-1", nil, ""); code != http.StatusNotFound {
		t.Fatalf("no payment yet: %d, want 404", code)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-1", nil, `{"status":"paid"}`); code != http.StatusAccepted {
		t.Fatalf("set payment: %d", code)
	}
	code, v := call(t, "GET", base+"/v1/payments/o-1", nil, "")
	if code != http.StatusOK || v["status"] != "paid" || v["order_id"] != "o-1" || v["paid_at"] == nil {
		t.Fatalf("paid payment: %d %v", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-1", nil, `{"status":"paid","callbacks":1}`); code != http.StatusBadRequest {
		t.Fatalf("callbacks without -callback-url: %d, want 400", code)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("paystub after cancel: %v", err)
	}

	// A merchant, an API key, and a wrong amount on demand.
	p = start(t, map[string]string{"SECKILL_PAYMENT_MERCHANT_ID": "m-1", "SECKILL_PAYMENT_API_KEY": "k-1"}, "paystub", "-addr", "127.0.0.1:0")
	base = "http://" + p.addr()
	key := map[string]string{"X-Api-Key": "k-1"}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","amount_minor":1999,"currency":"EUR"}`); code != http.StatusAccepted {
		t.Fatalf("set payment: %d", code)
	}
	if code, _ := call(t, "GET", base+"/v1/payments/o-2", nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("query without the API key: %d, want 401", code)
	}
	code, v = call(t, "GET", base+"/v1/payments/o-2", key, "")
	if code != http.StatusOK || v["amount_minor"] != 1999.0 || v["currency"] != "EUR" || v["merchant_id"] != "m-1" {
		t.Fatalf("paid payment: %d %v, want 1999 EUR to m-1", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","amount_minor":1999,"currency":"EUR","wrong":"amount"}`); code != http.StatusAccepted {
		t.Fatalf("set a wrong payment: %d", code)
	}
	if code, v = call(t, "GET", base+"/v1/payments/o-2", key, ""); code != http.StatusOK || v["amount_minor"] != 1998.0 {
		t.Fatalf("wrong amount: %d %v, want 1998", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","wrong":"price"}`); code != http.StatusBadRequest {
		t.Fatalf("wrong price: %d, want 400", code)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("paystub after cancel: %v", err)
	}
	err := run(context.Background(), []string{"seckill", "paystub", "-callback-url", "http://x"}, func(string) string { return "" }, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("paystub -callback-url without SECKILL_PAYMENT_SECRET = %v, want a usage error", err)
	}
}
