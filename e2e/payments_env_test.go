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
	stub.SetPriceLookup(func(ctx context.Context, id string) (int64, string, bool, error) {
		var price sql.NullInt64
		var currency sql.NullString
		err := s.db.QueryRowContext(ctx, "SELECT price_minor, currency FROM orders WHERE id = ?", id).Scan(&price, &currency)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, "", false, nil
		}
		return price.Int64, currency.String, price.Valid, err
	})
	s.priced = true
	return stub, map[string]string{
		"SECKILL_PAYMENT_URL":         newHTTPServer(s.t, stub),
		"SECKILL_PAYMENT_SECRET":      secret,
		"SECKILL_PAYMENT_MERCHANT_ID": stubMerchant,
		"SECKILL_PAYMENT_WINDOW":      window,
	}
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
