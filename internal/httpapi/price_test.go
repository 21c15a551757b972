package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// pricedFake is the fake service with the price route (Pricer).
type pricedFake struct {
	*fakeService
}

func (p pricedFake) SetPrice(_ context.Context, id, priceMinor int64, currency string) (seckill.ActivityView, error) {
	if err := seckill.ValidPrice(priceMinor, currency); err != nil {
		panic("SetPrice got an invalid price") // answered 500: the edge must refuse it first
	}
	v, err := p.activity(id)
	v.PriceMinor, v.Currency = priceMinor, currency
	return v, err
}

func newPricedServer() http.Handler {
	f := newFake()
	f.myOrder = func(activityID, userID int64) (seckill.Order, error) {
		return seckill.Order{ID: "ord-42", ActivityID: 1, UserID: 42, Status: seckill.OrderStatusRefundRequired, CreatedAt: t0,
			PaidAt: t0, PriceMinor: 1999, Currency: "EUR", RefundReason: seckill.RefundAmountMismatch}, nil
	}
	return NewServer(Config{AdminToken: adminToken, Now: func() time.Time { return t0.Add(-time.Hour) }}, withParts(Deps{Service: pricedFake{f}}))
}

// TestPriceBodies: an activity may be created with a price and currency
// (or without, as before), its price changed through the ops API, and the
// price shows on the activity and on the order with the refund's reason.
func TestPriceBodies(t *testing.T) {
	const window = `"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"`
	h := newPricedServer()
	tests := []struct {
		name   string
		req    request
		status int
		want   string
	}{
		{"create with a price", request{"POST", "/admin/v1/activities", `{"name":"x","total_stock":1,` + window + `,"price_minor":1999,"currency":"EUR"}`, admin}, 201,
			`{"id":7,"name":"x","total_stock":1,"remaining_stock":1,` + window + `,"status":"upcoming","price_minor":1999,"currency":"EUR","per_user_limit":1}`},
		{"create without a price", request{"POST", "/admin/v1/activities", `{"name":"x","total_stock":1,` + window + `}`, admin}, 201,
			`{"id":7,"name":"x","total_stock":1,"remaining_stock":1,` + window + `,"status":"upcoming","per_user_limit":1}`},
		{"set the price", request{"POST", "/admin/v1/activities/1/price", `{"price_minor":1000000000000,"currency":"JPY"}`, admin}, 200,
			`{"id":1,"name":"Moutai 53%","total_stock":100,"remaining_stock":37,` + window + `,"status":"active","price_minor":1000000000000,"currency":"JPY","per_user_limit":1}`},
		{"remove the price", request{"POST", "/admin/v1/activities/1/price", `{"price_minor":null,"currency":null}`, admin}, 200,
			`{"id":1,"name":"Moutai 53%","total_stock":100,"remaining_stock":37,` + window + `,"status":"active","per_user_limit":1}`},
		{"order with its price and refund reason", request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}, 200,
			`{"order_id":"ord-42","activity_id":1,"user_id":42,"status":"refund_required","quantity":1,"created_at":"2026-11-22T10:00:00Z","paid_at":"2026-11-22T10:00:00Z","price_minor":1999,"amount_minor":1999,"currency":"EUR","refund_reason":"amount_mismatch"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBody(t, serve(h, tt.req), tt.status, tt.want)
		})
	}
}

// TestPriceRejections: a price comes with its currency, as an integer of
// minor units in range, and a currency of three capital letters.
func TestPriceRejections(t *testing.T) {
	const create = `{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z",`
	h := newPricedServer()
	for _, body := range []string{
		create + `"price_minor":1999}`,
		create + `"currency":"EUR"}`,
		create + `"price_minor":0,"currency":"EUR"}`,
		create + `"price_minor":-1,"currency":"EUR"}`,
		create + `"price_minor":19.99,"currency":"EUR"}`,
		create + `"price_minor":1e3,"currency":"EUR"}`,
		create + `"price_minor":"1999","currency":"EUR"}`,
		create + `"price_minor":1000000000001,"currency":"EUR"}`,
		create + `"price_minor":1999,"currency":"eur"}`,
		create + `"price_minor":1999,"currency":"EURO"}`,
		create + `"price_minor":1999,"currency":null}`,
		create + `"price_minor":1999,"currency":"EUR","price_minor":1}`,
	} {
		checkError(t, serve(h, request{"POST", "/admin/v1/activities", body, admin}), http.StatusBadRequest, seckill.EInvalid)
	}
	for _, body := range []string{
		`{}`, `{"price_minor":1999}`, `{"currency":"EUR"}`, `{"price_minor":null}`, `{"currency":null}`, `{"price_minor":null,"currency":"EUR"}`,
		`{"price_minor":1999,"currency":null}`, `{"price_minor":0,"currency":""}`, `{"price_minor":1999,"currency":"EUR","x":1}`, `[]`,
	} {
		checkError(t, serve(h, request{"POST", "/admin/v1/activities/1/price", body, admin}), http.StatusBadRequest, seckill.EInvalid)
	}
	checkError(t, serve(h, request{"POST", "/admin/v1/activities/2/price", `{"price_minor":1,"currency":"EUR"}`, admin}), http.StatusNotFound, seckill.EActivityNotFound)
	checkError(t, serve(h, request{"POST", "/admin/v1/activities/1/price", `{"price_minor":1,"currency":"EUR"}`, nil}), http.StatusUnauthorized, seckill.EUnauthenticated)
}

// The price route is in the OpenAPI document.
func TestOpenAPIListsThePriceRoute(t *testing.T) {
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	if !v.HasOperation("POST", "/admin/v1/activities/{id}/price") {
		t.Error("POST /admin/v1/activities/{id}/price is not in docs/openapi.yaml")
	}
}
