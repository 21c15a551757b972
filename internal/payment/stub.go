package payment

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/seckill-oss/seckill/internal/stubhttp"
)

// StubConfig is the behaviour of a Stub that can change while it runs
// (GET/PUT /stub/config, durations as Go duration strings).
type StubConfig struct {
	// Latency of every provider answer.
	Latency time.Duration
	// FailRate is the share of provider answers (0..1) that are 500 errors.
	FailRate float64
}

// stubConfigJSON is StubConfig's wire form, with the callback URL, which a
// load test learns only once the service runs.
type stubConfigJSON struct {
	Latency     string  `json:"latency"`
	FailRate    float64 `json:"fail_rate"`
	CallbackURL string  `json:"callback_url"`
}

// StubPayment is what a PUT /stub/payments/{order_id} sets: the payment's
// status, and optional callbacks to the service.
type StubPayment struct {
	// Status: paid, pending or failed.
	Status string `json:"status"`
	// After delays the status change (Go duration; "" now): with a callback
	// sent before it, the callback arrives before the payment (out of order).
	After string `json:"after,omitempty"`
	// Callbacks is how many callbacks to send (0: none; 2: a duplicate).
	Callbacks int `json:"callbacks,omitempty"`
	// CallbackDelay is when they are sent (Go duration; "" at once).
	CallbackDelay string `json:"callback_delay,omitempty"`
	// AmountMinor, Currency and MerchantID, when set, are what the answer
	// says was paid, in what, to whom. Unset, the answer says the order's
	// price (from the Stub's PriceLookup) and the Stub's merchant.
	AmountMinor *int64 `json:"amount_minor,omitempty"`
	Currency    string `json:"currency,omitempty"`
	MerchantID  string `json:"merchant_id,omitempty"`
	// Wrong makes the answer wrong on purpose, a tampered payment:
	// "amount" (one minor unit off the order's price), "currency" (XXX,
	// ISO 4217's "no currency") or "merchant" (another merchant's id).
	Wrong string `json:"wrong,omitempty"`
}

// What StubPayment.Wrong can get wrong.
const (
	WrongAmount   = "amount"
	WrongCurrency = "currency"
	WrongMerchant = "merchant"
)

// PriceLookup returns an order's price, for a Stub to answer with the
// amount the order asks for: what a real provider knows because the app
// started the payment with it. ok is false when the order has no price.
type PriceLookup func(ctx context.Context, orderID string) (priceMinor int64, currency string, ok bool, err error)

// Stub is an http.Handler that plays the payment provider of docs/API.md:
//
//	GET /v1/payments/{order_id}         the provider's query API (404: no payment)
//	PUT /stub/payments/{order_id}       set the payment (StubPayment as JSON:
//	                                    what was paid, or a wrong amount,
//	                                    currency or merchant on demand)
//	GET /stub/config, PUT /stub/config  latency, failures and the callback
//	                                    URL (PUT behind a bearer token after
//	                                    RequireAdminToken)
//	GET /healthz
//
// With a callback URL and secret it also plays the provider's notifications:
// POST {callback URL}/api/v1/payments/callback, signed with X-Signature,
// sent late, twice or before the payment as a PUT asks. Close stops the
// callbacks not yet sent and waits for those in flight.
type Stub struct {
	mux    *http.ServeMux
	secret []byte
	client *http.Client
	log    *slog.Logger

	ctx     context.Context
	cancel  context.CancelFunc
	pending sync.WaitGroup

	mu          sync.Mutex // guards the fields below
	callbackURL string
	merchantID  string
	prices      PriceLookup
	apiKey      string
	// configLocked: PUT /stub/config needs configToken (none set: 403).
	configLocked bool
	configToken  [sha256.Size]byte // SHA-256 of the token; zero when unset
	configSet    bool              // a token was given
	cfg          StubConfig
	payments     map[string]stubState
	inFlight     map[string]int
	maxInFlight  int
	requests     map[string]int
	rnd          *rand.Rand
}

type stubState struct {
	status string
	paidAt time.Time
	answer StubPayment // AmountMinor, Currency, MerchantID, Wrong
}

// NewStub returns a Stub. callbackURL ("" for none) is the service's base
// URL; secret signs the callbacks.
func NewStub(cfg StubConfig, callbackURL string, secret []byte, log *slog.Logger) (*Stub, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if callbackURL != "" && len(secret) == 0 {
		return nil, errors.New("payment: stub callbacks need a secret")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Stub{
		mux:         http.NewServeMux(),
		callbackURL: strings.TrimRight(callbackURL, "/"),
		secret:      secret,
		client:      &http.Client{Timeout: 10 * time.Second},
		log:         log,
		cfg:         cfg,
		payments:    make(map[string]stubState),
		inFlight:    make(map[string]int),
		requests:    make(map[string]int),
		rnd:         rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mux.HandleFunc("GET /v1/payments/{order_id}", s.handleQuery)
	s.mux.HandleFunc("PUT /stub/payments/{order_id}", s.handleSet)
	stubhttp.Handle(s.mux, s.handleGetConfig, s.handlePutConfig)
	return s, nil
}

func (c StubConfig) validate() error {
	if c.Latency < 0 || !(c.FailRate >= 0 && c.FailRate <= 1) {
		return errors.New("payment: stub latency must not be negative, fail rate in [0, 1]")
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetCallbackURL sets the service's base URL that callbacks go to, for a
// service whose address is known only after the Stub was made.
func (s *Stub) SetCallbackURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callbackURL = strings.TrimRight(url, "/")
}

// Close cancels the callbacks not yet sent and waits for the rest.
func (s *Stub) Close() {
	s.cancel()
	s.pending.Wait()
	s.client.CloseIdleConnections()
}

// SetConfig replaces the behaviour.
func (s *Stub) SetConfig(cfg StubConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	return nil
}

// SetPayment sets the order's payment status now (paid_at now when paid),
// paid as the order asks.
func (s *Stub) SetPayment(orderID, status string) {
	s.setPayment(orderID, StubPayment{Status: status})
}

// SetPaymentAs sets the order's payment now as p says (its status and what
// was paid; After and Callbacks are the HTTP PUT's).
func (s *Stub) SetPaymentAs(orderID string, p StubPayment) error {
	if err := p.validateAnswer(); err != nil {
		return err
	}
	s.setPayment(orderID, p)
	return nil
}

func (s *Stub) setPayment(orderID string, p StubPayment) {
	st := stubState{status: p.Status, answer: p}
	if p.Status == PaymentPaid {
		st.paidAt = time.Now().UTC().Truncate(time.Microsecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payments[orderID] = st
}

// SetMerchantID sets the merchant id every answer names, unless a payment
// sets its own; "" names none.
func (s *Stub) SetMerchantID(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.merchantID = id
}

// SetPriceLookup sets where the Stub learns an order's price; nil: it
// does not, and an answer carries an amount only when its payment set one.
func (s *Stub) SetPriceLookup(f PriceLookup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prices = f
}

// RequireAPIKey makes the query API answer 401 to a request without key in
// APIKeyHeader; "" requires none.
func (s *Stub) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

func (p StubPayment) validateAnswer() error {
	switch {
	case p.Status != PaymentPaid && p.Status != PaymentPending && p.Status != PaymentFailed:
		return errors.New(`status must be "paid", "pending" or "failed"`)
	case p.AmountMinor != nil && *p.AmountMinor < 0:
		return errors.New("amount_minor must not be negative")
	case p.Wrong != "" && p.Wrong != WrongAmount && p.Wrong != WrongCurrency && p.Wrong != WrongMerchant:
		return errors.New(`wrong must be "amount", "currency" or "merchant"`)
	}
	return nil
}

// Requests reports how many queries the order's payment had.
func (s *Stub) Requests(orderID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[orderID]
}

// MaxInFlight reports the most queries of one order ever in flight at once.
func (s *Stub) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

func (s *Stub) handleQuery(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("order_id")
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	if key != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(APIKeyHeader)), []byte(key)) != 1 {
		stubhttp.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "unauthenticated", "message": "send the API key in " + APIKeyHeader}})
		return
	}
	s.mu.Lock()
	s.requests[id]++
	s.inFlight[id]++
	s.maxInFlight = max(s.maxInFlight, s.inFlight[id])
	latency, fail := s.cfg.Latency, s.rnd.Float64() < s.cfg.FailRate
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight[id]--
		s.mu.Unlock()
	}()
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if fail {
		stubhttp.WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]string{"code": "internal", "message": "stub: configured failure"}})
		return
	}
	s.mu.Lock()
	st, ok := s.payments[id]
	s.mu.Unlock()
	if !ok {
		stubhttp.WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no payment for this order"}})
		return
	}
	answer := map[string]any{"order_id": id, "status": st.status}
	if !st.paidAt.IsZero() {
		answer["paid_at"] = st.paidAt.Format(time.RFC3339Nano)
	}
	s.paidWith(r.Context(), id, st.answer, answer)
	stubhttp.WriteJSON(w, http.StatusOK, answer)
}

// paidWith adds to answer what was paid, in what, to whom: as the payment
// set it, else the order's price and the Stub's merchant, then made wrong
// as the payment asks.
func (s *Stub) paidWith(ctx context.Context, orderID string, p StubPayment, answer map[string]any) {
	s.mu.Lock()
	merchant, prices := s.merchantID, s.prices
	s.mu.Unlock()
	amount, currency := int64(0), p.Currency
	if p.AmountMinor != nil {
		amount = *p.AmountMinor
	}
	if p.AmountMinor == nil && p.Currency == "" && prices != nil {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		price, cur, ok, err := prices(lctx, orderID)
		cancel()
		switch {
		case err != nil:
			s.log.Warn("paystub: the order's price could not be read; answering without an amount", "order_id", orderID, "err", err)
		case ok:
			amount, currency = price, cur
		}
	}
	if p.MerchantID != "" {
		merchant = p.MerchantID
	}
	switch p.Wrong {
	case WrongAmount:
		if amount > 1 {
			amount--
		} else {
			amount++
		}
	case WrongCurrency:
		currency = "XXX"
	case WrongMerchant:
		merchant = "not-" + merchant
	}
	if amount != 0 || currency != "" {
		answer["amount_minor"], answer["currency"] = amount, currency
	}
	if merchant != "" {
		answer["merchant_id"] = merchant
	}
}

func (s *Stub) handleSet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("order_id")
	var p StubPayment
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "bad payment: "+err.Error())
		return
	}
	after, err1 := optionalDuration(p.After)
	delay, err2 := optionalDuration(p.CallbackDelay)
	if err := p.validateAnswer(); err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	switch {
	case err1 != nil || err2 != nil:
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "after and callback_delay must be Go durations such as 2s")
		return
	case p.Callbacks < 0 || p.Callbacks > 10:
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "callbacks must be 0..10")
		return
	case p.Callbacks > 0 && s.callbackBase() == "":
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "this stub has no callback URL (-callback-url)")
		return
	}
	if after > 0 {
		s.later(after, func() { s.setPayment(id, p) })
	} else {
		s.setPayment(id, p)
	}
	for range p.Callbacks {
		s.later(delay, func() { s.sendCallback(id, p.Status) })
	}
	stubhttp.WriteJSON(w, http.StatusAccepted, p)
}

// later runs f after d unless the Stub is closed first.
