package httpapi

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/payment"
)

// The real payment service must keep satisfying what the edge needs of it.
var _ Payments = (*payment.Service)(nil)

const callbackSecret = "callback-secret"

// fakePayments checks signatures as the real service does and answers
// callbacks for order "ord-42" only.
type fakePayments struct {
	now       func() time.Time // nil: time.Now
	callbacks []string
	refreshed []string
	callback  func(orderID string) (seckill.Order, error)
}

func (f *fakePayments) CheckSignature(body []byte, sig, ts string) error {
	return payment.Verifier{Secret: []byte(callbackSecret), Now: f.now}.Check(body, sig, ts)
}

func (f *fakePayments) Callback(_ context.Context, orderID string) (seckill.Order, error) {
	f.callbacks = append(f.callbacks, orderID)
	return f.callback(orderID)
}

func (f *fakePayments) Refresh(_ context.Context, o seckill.Order) seckill.Order {
	f.refreshed = append(f.refreshed, o.ID)
	o.Status, o.PayBy, o.PaidAt = seckill.OrderStatusPaid, t0.Add(15*time.Minute), t0.Add(time.Minute)
	return o
}

func (f *fakePayments) Counts(context.Context, int64) (int64, int64, error) { return 3, 1, nil }

func newFakePayments() *fakePayments {
	return &fakePayments{callback: func(id string) (seckill.Order, error) {
		if id != "ord-42" {
			return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "no order %q", id)
		}
		return seckill.Order{ID: id, ActivityID: 1, UserID: 42, Status: seckill.OrderStatusPaid, CreatedAt: t0,
			PayBy: t0.Add(15 * time.Minute), PaidAt: t0.Add(time.Minute)}, nil
	}}
}

func signed(body string) []string {
	return []string{"X-Signature", hex.EncodeToString(payment.Sign([]byte(callbackSecret), []byte(body)))}
}

// signedAt are the headers of body signed at t with a timestamp.
func signedAt(body string, t time.Time) []string {
	ts, sig := payment.SignAt([]byte(callbackSecret), []byte(body), t)
	return []string{"X-Signature-Timestamp", ts, "X-Signature", sig}
}

const paidJSON = `{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"paid","quantity":1,"created_at":"2026-11-22T10:00:00Z",
	"pay_by":"2026-11-22T10:15:00Z","paid_at":"2026-11-22T10:01:00Z"}`

func TestPaymentCallback(t *testing.T) {
	const path = "/api/v1/payments/callback"
	good := `{"order_id":"ord-42","status":"paid","extra":[1,2]}`
	upper := []string{"X-Signature", strings.ToUpper(signed(good)[1])}
	tests := []struct {
		name   string
		body   string
		header []string
		status int
		code   string
	}{
		{"signed", good, signed(good), 200, ""},
		{"signed, upper-case hex", good, upper, 200, ""},
		{"no signature", good, nil, 401, seckill.EUnauthenticated},
		{"signature of another body", good, signed(`{"order_id":"ord-42"}`), 401, seckill.EUnauthenticated},
		{"signature not hex", good, []string{"X-Signature", "zz"}, 401, seckill.EUnauthenticated},
		{"two signatures", good, append(signed(good), signed(good)...), 401, seckill.EUnauthenticated},
		{"bad body, bad signature: signature first", "not json", []string{"X-Signature", "00"}, 401, seckill.EUnauthenticated},
		{"signed, not JSON", "not json", signed("not json"), 400, seckill.EInvalid},
		{"signed, no order_id", `{"status":"paid"}`, signed(`{"status":"paid"}`), 400, seckill.EInvalid},
		{"signed, order_id a number", `{"order_id":42}`, signed(`{"order_id":42}`), 400, seckill.EInvalid},
		{"signed, unknown order", `{"order_id":"ord-7"}`, signed(`{"order_id":"ord-7"}`), 404, seckill.EOrderNotFound},
		{"signed with a timestamp", good, signedAt(good, time.Now()), 200, ""},
		{"signed with a timestamp, replayed 6 minutes later", good, signedAt(good, time.Now().Add(-6*time.Minute)), 401, seckill.EUnauthenticated},
		{"signed with a timestamp, from 6 minutes ahead", good, signedAt(good, time.Now().Add(6*time.Minute)), 401, seckill.EUnauthenticated},
		{"two timestamps", good, append(signedAt(good, time.Now()), "X-Signature-Timestamp", "1"), 401, seckill.EUnauthenticated},
		{"empty timestamp", good, append(signed(good), "X-Signature-Timestamp", ""), 401, seckill.EUnauthenticated},
		{"signed, trailing garbage", good + "garbage", signed(good + "garbage"), 400, seckill.EInvalid},
		{"signed, two JSON values", good + good, signed(good + good), 400, seckill.EInvalid},
		{"signed, not UTF-8", "{\"order_id\":\"ord-42\",\"x\":\"\xff\"}", signed("{\"order_id\":\"ord-42\",\"x\":\"\xff\"}"), 400, seckill.EInvalid},
		{"signed, order_id twice", `{"order_id":"ord-42","order_id":"ord-7"}`, signed(`{"order_id":"ord-42","order_id":"ord-7"}`), 400, seckill.EInvalid},
		{"signed, order_id in another case", `{"ORDER_ID":"ord-42"}`, signed(`{"ORDER_ID":"ord-42"}`), 400, seckill.EInvalid},
		{"signed, an array", `[{"order_id":"ord-42"}]`, signed(`[{"order_id":"ord-42"}]`), 400, seckill.EInvalid},
		{"signed, unknown members of every kind ignored", `{"a":{"b":[1,{"c":null}]},"order_id":"ord-42","a":true}`,
			signed(`{"a":{"b":[1,{"c":null}]},"order_id":"ord-42","a":true}`), 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pay := newFakePayments()
			h := NewServer(Config{}, withParts(Deps{Service: newFake(), Payments: pay}))
			rec := serve(h, request{"POST", path, tt.body, tt.header})
			if tt.code == "" {
				checkBody(t, rec, tt.status, paidJSON)
				return
			}
			checkError(t, rec, tt.status, tt.code)
			if tt.status == 401 && len(pay.callbacks) != 0 {
				t.Errorf("unauthenticated callback reached the service: %v", pay.callbacks)
			}
		})
	}

	t.Run("provider unknown", func(t *testing.T) {
		pay := newFakePayments()
		pay.callback = func(string) (seckill.Order, error) {
			return seckill.Order{}, &seckill.Error{Code: seckill.EUnavailable, Message: "later", Err: payment.ErrUnknown}
		}
		h := NewServer(Config{}, withParts(Deps{Service: newFake(), Payments: pay}))
		checkError(t, serve(h, request{"POST", path, good, signed(good)}), http.StatusServiceUnavailable, seckill.EUnavailable)
	})
	t.Run("payments off", func(t *testing.T) {
		h := NewServer(Config{}, withParts(Deps{Service: newFake()}))
		checkError(t, serve(h, request{"POST", path, good, signed(good)}), http.StatusNotFound, codeNotFound)
	})
}

// TestResultPageVerifies: orders/mine runs the verification of a created
// order and answers the status after it; with payments off it answers as
// before (no pay_by).
func TestResultPageVerifies(t *testing.T) {
	pay := newFakePayments()
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake(), Payments: pay}))
	checkBody(t, serve(h, request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}), 200,
		`{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"paid","quantity":1,"created_at":"2026-11-22T10:00:00Z",
		"pay_by":"2026-11-22T10:15:00Z","paid_at":"2026-11-22T10:01:00Z"}`)
	if len(pay.refreshed) != 1 {
		t.Errorf("result page verifications: %v, want one", pay.refreshed)
	}
	checkBody(t, serve(h, request{"GET", "/admin/v1/activities/1/audit", "", admin}), 200,
		`{"activity_id":1,"total_stock":100,"orders":100,"units":0,"redis_remaining":0,"oversold":false,"consistent":true,"expired":3,"refund_required":1,"admitted_open":0,"events_pending":0}`)

	off := NewServer(Config{}, withParts(Deps{Service: newFake()}))
	checkBody(t, serve(off, request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}), 200,
		`{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"created","quantity":1,"created_at":"2026-11-22T10:00:00Z"}`)
}

// waitingPayments' callbacks wait for as long as their context lets them,
// as a verification does that waits for the provider or for the order's
// lock.
type waitingPayments struct{ *fakePayments }

func (w waitingPayments) Callback(ctx context.Context, orderID string) (seckill.Order, error) {
	<-ctx.Done()
	return seckill.Order{}, seckill.Unavailable("the payment could not be verified now", ctx.Err())
}

// A callback's verification has a deadline: a callback kept waiting is
// answered 503 with Retry-After within CallbackWait, not when the provider
// gives up on it (a demo's callback once waited 10 s).
func TestPaymentCallbackDeadline(t *testing.T) {
	const wait = 200 * time.Millisecond
	good := `{"order_id":"ord-42"}`
	h := NewServer(Config{CallbackWait: wait}, withParts(Deps{Service: newFake(), Payments: waitingPayments{newFakePayments()}}))
	answered := make(chan *httptest.ResponseRecorder, 1)
	began := time.Now()
	go func() { answered <- serve(h, request{"POST", "/api/v1/payments/callback", good, signed(good)}) }()
	select {
	case rec := <-answered:
		if took := time.Since(began); took < wait {
			t.Errorf("answered after %v, before the deadline %v", took, wait)
		}
		checkError(t, rec, http.StatusServiceUnavailable, seckill.EUnavailable)
		if rec.Header().Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the callback is still waiting 5s later")
	}
	if d := (Config{}).callbackWait(); d != DefaultCallbackWait || d > 10*time.Second {
		t.Errorf("default callback wait %v", d)
	}
}
