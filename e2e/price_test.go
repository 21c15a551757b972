package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// TestPricePaymentProvesThePrice: the built service, on the real Redis and
// MariaDB, with a payment provider that requires an API key and names a
// merchant. An activity is created with a price and each order carries the
// price of its sale (a price change moves later orders only). A payment of
// the order's price to the merchant makes the order paid; a payment one
// cent short makes it refund_required (amount_mismatch), its unit back on
// sale for the next buyer, and the books balance.
//
// Can fail: with the amount not checked, the short payment's order is
// "paid" and the third buyer is told sold_out.
func TestPricePaymentProvesThePrice(t *testing.T) {
	const (
		secret   = "price-test-payment-secret-0123456789"
		merchant = "m-e2e"
		apiKey   = "price-test-api-key"
	)
	s := newProcessStack(t, usercheck.StubConfig{})
	stub, err := payment.NewStub(payment.StubConfig{}, "", []byte(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stub.Close)
	stub.SetMerchantID(merchant)
	stub.RequireAPIKey(apiKey)
	stub.SetPriceLookup(s.orderPrice)
	p := startProcess(t, s.processEnv(map[string]string{
		"SECKILL_PAYMENT_URL":         newHTTPServer(t, stub),
		"SECKILL_PAYMENT_SECRET":      secret,
		"SECKILL_PAYMENT_MERCHANT_ID": merchant,
		"SECKILL_PAYMENT_API_KEY":     apiKey,
	}))
	s.url = p.url

	now := time.Now().UTC()
	r := s.do("POST", "/admin/v1/activities", map[string]any{
		"name": "priced", "total_stock": 2, "price_minor": 1999, "currency": "EUR",
		"starts_at": now.Add(-time.Minute).Format(time.RFC3339), "ends_at": now.Add(time.Hour).Format(time.RFC3339),
	}, admin())
	if r.status != http.StatusCreated || r.body["price_minor"] != 1999.0 || r.body["currency"] != "EUR" {
		t.Fatalf("create a priced activity: %d %s", r.status, r.raw)
	}
	act := int64(r.body["id"].(float64))

	priced := func(user int64, price float64, currency string) string {
		t.Helper()
		r := s.buy(act, user, nil)
		if r.status != http.StatusCreated || r.body["price_minor"] != price || r.body["currency"] != currency {
			t.Fatalf("user %d buys: %d %s, want 201 at %v %s", user, r.status, r.raw, price, currency)
		}
		return r.body["order_id"].(string)
	}
	first := priced(1, 1999, "EUR")
	if r := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/price", act), map[string]any{"price_minor": 2500, "currency": "EUR"}, admin()); r.status != http.StatusOK || r.body["price_minor"] != 2500.0 {
		t.Fatalf("set the price: %d %s", r.status, r.raw)
	}
	second := priced(2, 2500, "EUR")

	// User 1 pays the price; user 2 pays a cent short.
	stub.SetPayment(first, payment.PaymentPaid)
	if err := stub.SetPaymentAs(second, payment.StubPayment{Status: payment.PaymentPaid, Wrong: payment.WrongAmount}); err != nil {
		t.Fatal(err)
	}
	mine := func(user int64) response {
		t.Helper()
		return s.do("GET", fmt.Sprintf("/api/v1/activities/%d/orders/mine", act), nil, buyer(user))
	}
	if r := mine(1); r.status != http.StatusOK || r.body["status"] != "paid" || r.body["price_minor"] != 1999.0 {
		t.Fatalf("user 1's order after paying the price: %d %s, want paid at 1999", r.status, r.raw)
	}
	r = mine(2)
	if r.status != http.StatusOK || r.body["status"] != "refund_required" || r.body["refund_reason"] != "amount_mismatch" || r.body["price_minor"] != 2500.0 {
		t.Fatalf("user 2's order after paying a cent short: %d %s, want refund_required, amount_mismatch", r.status, r.raw)
	}
	// The short payment's unit is back on sale.
	if r := s.buy(act, 3, nil); r.status != http.StatusCreated {
		t.Fatalf("user 3 buys the unit given back: %d %s", r.status, r.raw)
	}
	if a := s.audit(act); a.Orders != 2 || !a.Consistent || a.Oversold {
		t.Fatalf("audit: %+v, want 2 orders, consistent", a)
	}
	var reason string
	if err := s.db.QueryRow("SELECT refund_reason FROM orders WHERE id = ?", second).Scan(&reason); err != nil || reason != "amount_mismatch" {
		t.Fatalf("stored refund_reason %q, %v", reason, err)
	}
}
