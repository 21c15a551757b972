package e2e_test

import (
	"context"
	"database/sql"
	"errors"
	"maps"

	"github.com/seckill-oss/seckill/internal/payment"
)

// stubMerchant is the merchant every payment stub of pricedPayments names.
const stubMerchant = "m-e2e-stub"

// pricedPayments starts a payment stub as the secure defaults want the
// provider: it names the service's merchant and each order's price, read
// from the stack's database. It returns the stub and the service's payment
// settings (window: SECKILL_PAYMENT_WINDOW); the stack's activities are
// priced from then on, as payments require.
func (s *stack) pricedPayments(window string) (*payment.Stub, map[string]string) {
	s.t.Helper()
	const secret = "e2e-payment-secret-0123456789abcdef"
	stub, err := payment.NewStub(payment.StubConfig{}, "", []byte(secret), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(stub.Close)
	stub.SetMerchantID(stubMerchant)
	stub.SetPriceLookup(s.orderPrice)
	s.priced = true
	return stub, map[string]string{
		"SECKILL_PAYMENT_URL":         newHTTPServer(s.t, stub),
		"SECKILL_PAYMENT_SECRET":      secret,
		"SECKILL_PAYMENT_MERCHANT_ID": stubMerchant,
		"SECKILL_PAYMENT_WINDOW":      window,
	}
}

// orderPrice is the payment stub's price lookup: the order's price and
// currency as the database holds them, ok false for an order it does not
// hold.
func (s *stack) orderPrice(ctx context.Context, id string) (price int64, currency string, ok bool, err error) {
	var p sql.NullInt64
	var c sql.NullString
	err = s.db.QueryRowContext(ctx, "SELECT price_minor, currency FROM orders WHERE id = ?", id).Scan(&p, &c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", false, nil
	}
	return p.Int64, c.String, p.Valid, err
}

// withPrice is an activity's creation body, with a price when the stack's
// activities are priced.
func (s *stack) withPrice(body map[string]any) map[string]any {
	if !s.priced {
		return body
	}
	body = maps.Clone(body)
	body["price_minor"], body["currency"] = 100, "CNY"
	return body
}
