package main

import (
	"errors"
	"fmt"
	"strconv"
)

// SECKILL_STRICT=true turns on the secure defaults that the HTTP contract
// (docs/API.md) cannot make the defaults, since clients and the acceptance
// suite rely on the contract's:
//   - serve refuses to start without SECKILL_USERCHECK_URL, unless
//     SECKILL_USERCHECK=approve-all says every buyer is approved on purpose
//     (the contract: unset approves everyone, with a warning);
//   - with payments on, SECKILL_PAYMENT_MERCHANT_ID is required (a payment
//     to another merchant account carrying the order id is refused);
//   - SECKILL_ADMIN_TOKEN must be at least 16 bytes;
//   - callbacks must carry the timestamped signature
//     (SECKILL_PAYMENT_REQUIRE_TIMESTAMP defaults to true);
//   - with payments on, an activity must have a price (creating one
//     without, or removing it, is 400), and a paid answer for an order
//     without one is refund_required (no_price), never paid.
// The embedded demo ignores it: it is a throwaway on loopback.

// strictness reads SECKILL_STRICT, SECKILL_USERCHECK and
// SECKILL_PAYMENT_REQUIRE_TIMESTAMP, and refuses what strict mode does not
// allow, each error naming its setting. It runs last: it judges the other
// settings.
func (c *config) strictness(e *envReader) {
	c.Strict = e.boolean("SECKILL_STRICT", "false")
	switch v := e.get("SECKILL_USERCHECK"); v {
	case "":
	case "approve-all":
		c.ApproveAll = true
	default:
		e.fail(fmt.Errorf("SECKILL_USERCHECK=%q: the only value is approve-all", v))
	}
	c.PaymentRequireTimestamp = e.boolean("SECKILL_PAYMENT_REQUIRE_TIMESTAMP", strconv.FormatBool(c.Strict))
	if !c.Strict || c.embedded() {
		return
	}
	if c.UserCheckURL == "" && !c.ApproveAll {
		e.fail(errors.New("SECKILL_USERCHECK_URL is unset and SECKILL_STRICT=true: set it to the user-verification service, or SECKILL_USERCHECK=approve-all to approve every buyer on purpose"))
	}
	if c.PaymentURL != "" && c.PaymentMerchantID == "" {
		e.fail(errors.New("SECKILL_PAYMENT_MERCHANT_ID is required when SECKILL_PAYMENT_URL is set and SECKILL_STRICT=true: a paid answer must name this service's merchant"))
	}
	if c.AdminToken != "" && len(c.AdminToken) < minSecretLen {
		e.fail(fmt.Errorf("SECKILL_ADMIN_TOKEN is shorter than %d bytes and SECKILL_STRICT=true: use at least 16 random bytes (openssl rand -hex 16)", minSecretLen))
	}
}

// requirePrice reports whether activities must have a price: strict mode
// with payments on.
func (c config) requirePrice() bool { return c.Strict && !c.embedded() && c.PaymentURL != "" }
