package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/payment"
)

// paystub serves a stand-in for the payment provider, for local runs,
// docker-compose and the load tests: GET /v1/payments/{order_id} answers
// what PUT /stub/payments/{order_id} set, and with -callback-url it sends
// the service signed callbacks, late, twice or before the payment, as each
// PUT asks (docs/API.md "Payments and expiry"). The callback secret comes
// from SECKILL_PAYMENT_SECRET, never from a flag (flags show in ps), and so
// does the API key it requires, SECKILL_PAYMENT_API_KEY. PUT /stub/config,
// which changes where callbacks go, needs the bearer token SECKILL_ADMIN_TOKEN,
// and answers 403 without one configured; setting a
// payment stays open.
//
// A paid answer names the order's price and the merchant (-merchant-id,
// default SECKILL_PAYMENT_MERCHANT_ID): the stub reads each order's price
// from the service's database when SECKILL_MYSQL_DSN is set, and a PUT may
// set the amount, currency and merchant itself, or ask for a wrong one
// ({"wrong":"amount"|"currency"|"merchant"}).
func paystub(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("paystub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8082", "listen address")
	callbackURL := fs.String("callback-url", "", "base URL of the seckill service callbacks go to (needs SECKILL_PAYMENT_SECRET); empty: no callbacks")
	merchantID := fs.String("merchant-id", getenv("SECKILL_PAYMENT_MERCHANT_ID"), "merchant id every answer names (default SECKILL_PAYMENT_MERCHANT_ID); empty: none")
	var sc payment.StubConfig
	fs.DurationVar(&sc.Latency, "latency", 0, "delay of every provider answer")
	fs.Float64Var(&sc.FailRate, "fail-rate", 0, "share of provider answers (0..1) that are 500 errors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	stub, err := payment.NewStub(sc, *callbackURL, []byte(getenv("SECKILL_PAYMENT_SECRET")), log)
	if err != nil {
		fmt.Fprintf(stderr, "paystub: %v (set SECKILL_PAYMENT_SECRET for callbacks)\n", err)
		return errUsage
	}
	defer stub.Close()
	stub.SetMerchantID(*merchantID)
	// Run on its own the stub is reachable by whoever reaches its port, and
	// its configuration says where signed callbacks go: locked, unlike the
	// demo's in-process stub on loopback.
	// The token comes from the environment only, as the secret does: flags
	// show in ps.
	token := getenv("SECKILL_ADMIN_TOKEN")
	stub.RequireAdminToken(token)
	apiKey := getenv("SECKILL_PAYMENT_API_KEY")
	stub.RequireAPIKey(apiKey)
	prices := "set by each PUT"
	if dsn := getenv("SECKILL_MYSQL_DSN"); dsn != "" {
		orders, err := order.Open(ctx, dsn, order.Options{})
		if err != nil {
			return fmt.Errorf("paystub: order database for prices: %w", err)
		}
		defer orders.Close()
		stub.SetPriceLookup(orderPrices(orders))
		prices = "read from SECKILL_MYSQL_DSN"
	}

	return serveStub(ctx, "paystub", *addr, stub, log,
		"callback_url", *callbackURL, "latency", sc.Latency, "fail_rate", sc.FailRate,
		"merchant_id", *merchantID, "api_key", apiKey != "", "prices", prices, "config_token", token != "")
}
