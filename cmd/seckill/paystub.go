package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/seckill-oss/seckill/internal/payment"
)

// paystub serves a stand-in for the payment provider, for local runs,
// docker-compose and the load tests: GET /v1/payments/{order_id} answers
// what PUT /stub/payments/{order_id} set, and with -callback-url it sends
// the service signed callbacks, late, twice or before the payment, as each
// PUT asks (docs/API.md "Payments and expiry"). The callback secret comes
// from SECKILL_PAYMENT_SECRET, never from a flag (flags show in ps).
func paystub(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("paystub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8082", "listen address")
	callbackURL := fs.String("callback-url", "", "base URL of the seckill service callbacks go to (needs SECKILL_PAYMENT_SECRET); empty: no callbacks")
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

	return serveStub(ctx, "paystub", *addr, stub, log,
		"callback_url", *callbackURL, "latency", sc.Latency, "fail_rate", sc.FailRate)
}
