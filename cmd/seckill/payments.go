package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/stubhttp"
)

// payments is the payment flow of a serve process, with the payment stub it
// runs in process in the embedded mode. A nil *payments is "payments off".
type payments struct {
	svc     *payment.Service
	stub    *payment.Stub // embedded mode only
	stubSrv *http.Server
	stubErr chan error
	stubURL string
}

// openPayments turns payments on when SECKILL_PAYMENT_URL is set, or, in the
// embedded mode, against a payment stub it starts in process; otherwise it
// returns nil. It must run before any order is written (the order store
// starts giving orders a pay_by), and starts the delay queue.
func openPayments(cfg config, embedded bool, b *backend, log *slog.Logger, reg prometheus.Registerer) (_ *payments, err error) {
	if cfg.PaymentURL == "" && !embedded {
		return nil, nil
	}
	p := &payments{}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if cfg.PaymentURL == "" {
		cfg.PaymentSecret, cfg.PaymentAPIKey = randomToken(), randomToken()
		if cfg.PaymentMerchantID == "" {
			cfg.PaymentMerchantID = demoMerchantID
		}
		if err := p.startStub(cfg, b, log); err != nil {
			return nil, err
		}
		cfg.PaymentURL = p.stubURL
	}
	b.orders.Orders.SetPaymentWindow(cfg.PaymentWindow)
	p.svc, err = payment.New(payment.Config{
		ProviderURL: cfg.PaymentURL,
		Secret:      []byte(cfg.PaymentSecret),
		// Empty unless a rotation is under way.
		PreviousSecret:   []byte(cfg.PaymentSecretPrevious),
		MerchantID:       cfg.PaymentMerchantID,
		RequirePrice:     cfg.requirePrice(),
		RequireTimestamp: cfg.PaymentRequireTimestamp,
		APIKey:           cfg.PaymentAPIKey,
		LockTTL:          cfg.LockTTL,
	}, payment.Deps{
		Redis:  b.rdb,
		Locks:  b.locks,
		Stock:  b.core.Stock,
		Orders: b.orders,
		// A unit an expiry gave back sells at once, not after the
		// purchase path's sold-out mark is rechecked.
		OnUnitReturned: b.core.Sales.ClearSoldOut,
		Logger:         log,
		Registry:       reg,
	})
	if err != nil {
		return nil, fmt.Errorf("payment service: %w", err)
	}
	p.svc.Start()
	if cfg.PaymentMerchantID == "" && !cfg.relaxed() { // relaxed: said by logSecurity's one warning
		log.Warn("SECKILL_PAYMENT_MERCHANT_ID is unset: a payment's merchant is not checked; set it to the service's merchant id at the provider")
	}
	log.Info("payments on", "provider", redactedURL(cfg.PaymentURL), "window", cfg.PaymentWindow.String(),
		"merchant_id", cfg.PaymentMerchantID, "api_key", cfg.PaymentAPIKey != "")
	return p, nil
}

// demoMerchantID is the merchant of the embedded mode's in-process stub.
const demoMerchantID = "seckill-demo"

// startStub serves a payment stub on a loopback port of its own, which
// answers each order's price from the order store, cfg's merchant, and
// asks for cfg's API key.
func (p *payments) startStub(cfg config, b *backend, log *slog.Logger) error {
	stub, err := payment.NewStub(payment.StubConfig{}, "", []byte(cfg.PaymentSecret), log.With("component", "paystub"))
	if err != nil {
		return err
	}
	stub.SetMerchantID(cfg.PaymentMerchantID)
	stub.RequireAPIKey(cfg.PaymentAPIKey)
	stub.SetPriceLookup(orderPrices(b.orders))
	// Started once, at start-up; nothing to cancel it by but the process.
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		stub.Close()
		return fmt.Errorf("payment stub: %w", err)
	}
	p.stub, p.stubURL, p.stubErr = stub, "http://"+ln.Addr().String(), make(chan error, 1)
	mux := http.NewServeMux()
	mux.Handle("/", stub)
	mux.Handle("PUT /stub/activities/{activity}/users/{user}/payment", payUsersOrder(b.orders, stub))
	p.stubSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { p.stubErr <- p.stubSrv.Serve(ln) }()
	log.Warn("SECKILL_PAYMENT_URL is unset: using an in-process payment stub", "url", p.stubURL)
	return nil
}

// api is what the HTTP edge gets: nil when payments are off.
func (p *payments) api() httpapi.Payments {
	if p == nil {
		return nil
	}
	return p.svc
}

// canceller is the buyer's cancel, nil when payments are off.
func (p *payments) canceller() httpapi.Canceller {
	if p == nil {
		return nil
	}
	return p.svc
}

// serving tells the in-process stub where the service answers callbacks.
func (p *payments) serving(addr net.Addr) {
	if p != nil && p.stub != nil {
		p.stub.SetCallbackURL("http://" + hostPort(addr))
	}
}

// printDemo tells the person at the terminal how to pay the demo order.
func (p *payments) printDemo(stdout io.Writer, base string, activityID int64, window time.Duration) {
	if p == nil || p.stub == nil {
		return
	}
	fmt.Fprintf(stdout, "Payments: an order must be paid within %s or its unit goes back on sale. To pay user 42's order\n", window)
	fmt.Fprintf(stdout, "through the in-process payment stub, with a signed callback, then see it paid:\n\n")
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -X PUT -d '%s' %s\n", demoPayment, p.stubURL+demoPayPath(activityID, 42))
	fmt.Fprintf(stdout, "  curl -s -w '\\n' -H 'X-User-ID: 42' %s/api/v1/activities/%d/orders/mine\n\n", base, activityID)
	fmt.Fprintf(stdout, "(Any order by its id: PUT %s/stub/payments/ORDER_ID with the same body.)\n\n", p.stubURL)
}

// Close stops the delay queue, then the stub. It is safe on nil.
func (p *payments) Close() {
	if p == nil {
		return
	}
	if p.svc != nil {
		_ = p.svc.Close()
	}
	if p.stub != nil {
		_ = p.stubSrv.Close()
		if err := <-p.stubErr; !errors.Is(err, http.ErrServerClosed) {
			slog.Warn("payment stub", "err", err)
		}
		p.stub.Close()
	}
}

// orderPrices is a payment stub's PriceLookup reading the order store: the
// stub then answers each order's own price, as a provider whose payment the
// app started with the order's amount.
func orderPrices(orders *order.Store) payment.PriceLookup {
	return func(ctx context.Context, orderID string) (int64, string, bool, error) {
		o, err := orders.Orders.OrderByID(ctx, orderID)
		switch {
		case errors.Is(err, order.ErrNotFound):
			return 0, "", false, nil
		case err != nil:
			return 0, "", false, err
		}
		return o.AmountMinor(), o.Currency, o.PriceMinor > 0, nil
	}
}

// demoPayment is the body of the demo's pay line: paid, with one callback.
const demoPayment = `{"status":"paid","callbacks":1}`

// demoPayPath is the demo stub's path that pays a user's order in an
// activity, so that the printed pay line needs no order id pasted in.
func demoPayPath(activityID, userID int64) string {
	return fmt.Sprintf("/stub/activities/%d/users/%d/payment", activityID, userID)
}

// payUsersOrder serves demoPayPath: it finds the user's order in the
// activity and sets its payment as PUT /stub/payments/{order_id} does.
func payUsersOrder(orders *order.Store, stub http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		activityID, err1 := strconv.ParseInt(r.PathValue("activity"), 10, 64)
		userID, err2 := strconv.ParseInt(r.PathValue("user"), 10, 64)
		if err1 != nil || err2 != nil {
			stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "activity and user must be numbers")
			return
		}
		o, err := orders.Orders.OrderByUser(r.Context(), activityID, userID)
		switch {
		case errors.Is(err, order.ErrNotFound):
			stubhttp.WriteError(w, http.StatusNotFound, "not_found",
				fmt.Sprintf("user %d has no order in activity %d: buy first", userID, activityID))
			return
		case err != nil:
			stubhttp.WriteError(w, http.StatusServiceUnavailable, "unavailable", "the order database did not answer")
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/stub/payments/"+url.PathEscape(o.ID), ""
		stub.ServeHTTP(w, r2)
	})
}
