package httpapi

// Fuzz targets of the hostile-input surface. `go test` runs their seed
// corpora (testdata/fuzz/<Name>/ plus the f.Add seeds); a fuzzing run is
//
//	go test -run '^$' -fuzz '^FuzzServer$' -fuzztime 10m ./internal/httpapi/
//
// one target at a time.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// isInvalid reports whether err is a 400 invalid_request.
func isInvalid(err error) bool {
	var e *seckill.Error
	return errors.As(err, &e) && e.Code == seckill.EInvalid
}

// acceptedJSON checks a JSON body decoder's verdict on body: a refusal must
// be invalid_request, and only valid UTF-8 JSON may be accepted. It
// reports whether body was accepted, for the caller's own checks.
func acceptedJSON(t *testing.T, body []byte, err error) bool {
	t.Helper()
	if err != nil {
		if !isInvalid(err) {
			t.Fatalf("error %v, want invalid_request", err)
		}
		return false
	}
	if !utf8.Valid(body) || !json.Valid(body) {
		t.Fatalf("accepted %q, which is not valid UTF-8 JSON", body)
	}
	return true
}

func FuzzParseUserID(f *testing.F) {
	for _, s := range []string{"1", "42", "9223372036854775807", "9223372036854775808", "0", "-1", "+1", "01", " 1", "1 ", "1e3", "0x10", "١", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseUserID(http.Header{"X-User-Id": {s}})
		// The oracle: exactly the canonical decimal spellings of 1..MaxInt64.
		n, perr := strconv.ParseInt(s, 10, 64)
		canonical := perr == nil && n > 0 && strconv.FormatInt(n, 10) == s
		switch {
		case canonical && (err != nil || id != n):
			t.Fatalf("parseUserID(%q) = %d, %v; want %d", s, id, err, n)
		case !canonical && err == nil:
			t.Fatalf("parseUserID(%q) accepted %d", s, id)
		case err != nil && codeOf(err) != seckill.EUnauthenticated:
			t.Fatalf("parseUserID(%q) error %v, want unauthenticated", s, err)
		}
	})
}

// codeOf returns the contract code of err, "" when it carries none.
func codeOf(err error) string {
	var e *seckill.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

var idempotencyKeyRE = regexp.MustCompile(`^[!-~]{1,64}$`)

func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"k", "order-2026-11-22T10:00:00Z#1", strings.Repeat("a", 64), strings.Repeat("a", 65), "", "a b", "\x7f", "é", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := parseIdempotencyKey(http.Header{"Idempotency-Key": {s}})
		want := idempotencyKeyRE.MatchString(s)
		switch {
		case want && (err != nil || key != s):
			t.Fatalf("parseIdempotencyKey(%q) = %q, %v; want it accepted", s, key, err)
		case !want && err == nil:
			t.Fatalf("parseIdempotencyKey(%q) accepted", s)
		case err != nil && !isInvalid(err):
			t.Fatalf("parseIdempotencyKey(%q) error %v, want invalid_request", s, err)
		}
	})
}

func FuzzDecodePurchaseBody(f *testing.F) {
	for _, s := range []string{"", " ", "{}", `{"quantity":1}`, `{"quantity":2}`, `{"quantity":100}`, `{"quantity":101}`, `{"quantity":0}`, `{"quantity":-1}`, `{"quantity":1e1}`, `{"quantity":null}`, `{"quantity":1.0}`,
		`{"Quantity":1}`, `{"quantity":1,"quantity":1}`, `{}{}`, `[]`, "{\"\xff\":1}", `{"quantity":"1"}`, `{"a":{"b":[1,2,{"c":null}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := decodePurchaseBody(body)
		if err != nil {
			if !isInvalid(err) {
				t.Fatalf("error %v, want invalid_request", err)
			}
			var members map[string]json.RawMessage
			if utf8.Valid(body) && json.Unmarshal(body, &members) == nil && members != nil && len(members) == 0 {
				t.Fatalf("rejected the empty object %q: %v", body, err)
			}
			return
		}
		if len(bytes.Trim(body, " \t\r\n")) == 0 {
			return
		}
		// Accepted: one valid UTF-8 JSON object whose only member is a
		// quantity in 1..100, the one returned.
		var members map[string]json.RawMessage
		if !utf8.Valid(body) || json.Unmarshal(body, &members) != nil || members == nil {
			t.Fatalf("accepted %q, which is not one JSON object", body)
		}
		for k, v := range members {
			if k != "quantity" || string(v) != strconv.FormatInt(q, 10) || q < 1 || q > seckill.MaxPerUserLimit {
				t.Fatalf("accepted %q with member %q: %s (quantity %d)", body, k, v, q)
			}
		}
	})
}

func FuzzDecodeCreateActivity(f *testing.F) {
	for _, s := range []string{
		`{"name":"Moutai 53%","total_stock":100,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"name":"x","total_stock":10000000,"starts_at":"2026-11-22T10:00:00.5+08:00","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"name":"x","total_stock":0,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"name":"","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T10:00:00Z"}`,
		`{"name":"x","name":"y","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"NAME":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`,
		`{"name":"\u0000","total_stock":1e3,"starts_at":1,"ends_at":null}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price_minor":1999,"currency":"EUR"}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price_minor":1999}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","currency":"EUR"}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price_minor":19.99,"currency":"eur"}`,
		`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price_minor":1000000000001,"currency":"E\u0055R"}`,
		`{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := decodeCreateActivity(body)
		if !acceptedJSON(t, body, err) {
			return
		}
		if n := utf8.RuneCountInString(a.Name); n < 1 || n > seckill.MaxActivityName || seckill.ValidateName(a.Name) != nil {
			t.Fatalf("accepted name %q", a.Name)
		}
		if a.TotalStock < 1 || a.TotalStock > seckill.MaxTotalStock {
			t.Fatalf("accepted total_stock %d", a.TotalStock)
		}
		if !a.EndsAt.After(a.StartsAt) || a.StartsAt.Location().String() != "UTC" || a.EndsAt.Location().String() != "UTC" {
			t.Fatalf("accepted window %v - %v", a.StartsAt, a.EndsAt)
		}
		checkPrice(t, body, a.PriceMinor, a.Currency, false)
	})
}

// checkPrice is the oracle of an accepted price: none, or an integer of
// minor units in 1..MaxPriceMinor with three capital letters, exactly the
// members the body sent (null for none only where nullOK).
func checkPrice(t *testing.T, body []byte, price int64, currency string, nullOK bool) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatalf("accepted %q: %v", body, err)
	}
	rawPrice, hasPrice := members["price_minor"]
	rawCurrency, hasCurrency := members["currency"]
	if hasPrice != hasCurrency {
		t.Fatalf("accepted %q: a price without its currency, or a currency without a price", body)
	}
	if price == 0 && currency == "" {
		bothNull := nullOK && string(rawPrice) == "null" && string(rawCurrency) == "null"
		if hasPrice && !bothNull {
			t.Fatalf("accepted %q as no price", body)
		}
		return
	}
	if price < 1 || price > seckill.MaxPriceMinor || !regexp.MustCompile(`^[A-Z]{3}$`).MatchString(currency) {
		t.Fatalf("accepted price %d %q", price, currency)
	}
	var n json.Number
	var c string
	dec := json.NewDecoder(bytes.NewReader(rawPrice))
	dec.UseNumber()
	if dec.Decode(&n) != nil || n.String() != strconv.FormatInt(price, 10) || json.Unmarshal(rawCurrency, &c) != nil || c != currency {
		t.Fatalf("accepted %q as %d %q", body, price, currency)
	}
}

func FuzzDecodePrice(f *testing.F) {
	for _, s := range []string{
		`{"price_minor":1999,"currency":"EUR"}`, `{"price_minor":null,"currency":null}`, `{"price_minor":1,"currency":"JPY"}`,
		`{"price_minor":1000000000000,"currency":"USD"}`, `{"price_minor":1000000000001,"currency":"USD"}`,
		`{"price_minor":0,"currency":"EUR"}`, `{"price_minor":-5,"currency":"EUR"}`, `{"price_minor":1.5,"currency":"EUR"}`,
		`{"price_minor":1e2,"currency":"EUR"}`, `{"price_minor":"1","currency":"EUR"}`, `{"price_minor":1,"currency":"eur"}`,
		`{"price_minor":1,"currency":"EU"}`, `{"price_minor":1,"currency":null}`, `{"price_minor":null,"currency":"EUR"}`,
		`{"price_minor":1}`, `{"currency":"EUR"}`, `{"price_minor":null}`, `{"price_minor":1,"currency":"EUR","price_minor":2}`, `{"Price_Minor":1,"currency":"EUR"}`,
		`{"price_minor":1,"currency":"\u0045UR"}`, `{"price_minor":1,"currency":"ÉUR"}`, `{}`, `null`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		price, currency, err := decodePrice(body)
		if !acceptedJSON(t, body, err) {
			return
		}
		checkPrice(t, body, price, currency, true)
	})
}

// contractCodes are the codes a client may see.
var contractCodes = map[string]bool{
	seckill.EInvalid: true, seckill.EUnauthenticated: true, seckill.EAdminDisabled: true, seckill.ETooLarge: true,
	seckill.EUserRejected: true, seckill.EActivityNotFound: true, seckill.EOrderNotFound: true,
	seckill.ENotStarted: true, seckill.EEnded: true, seckill.ESoldOut: true, seckill.EAlreadyPurchased: true,
	seckill.EBusy: true, seckill.EUnavailable: true, seckill.EInternal: true,
	codeNotFound: true, codeMethodNotAllowed: true, codeTooManyRequests: true,
}

// FuzzServer sends arbitrary ids, headers and bodies through the whole
// handler to a well-behaved service: the answer is never a 5xx, always JSON,
// and an error always carries a contract code with its status; the service
// only ever sees valid arguments.
func FuzzServer(f *testing.F) {
	f.Add(uint8(0), "1", "42", "", "", []byte(""))
	f.Add(uint8(0), "1", "42", "key-1", "", []byte(`{"quantity":1}`))
	f.Add(uint8(0), "-1", "042", "a b", "", []byte(`{"quantity":2}`))
	f.Add(uint8(1), "9223372036854775807", "", "", "", []byte(nil))
	f.Add(uint8(2), "1", "9223372036854775807", "", "", []byte(nil))
	f.Add(uint8(3), "", "", "", "Bearer "+adminToken, []byte(`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z"}`))
	f.Add(uint8(3), "", "", "", "Bearer "+adminToken, []byte("{\"name\":\"\xff\"}"))
	f.Add(uint8(4), "1", "", "", "Bearer wrong", []byte(nil))
	f.Add(uint8(5), "99999999999999999999", "", "", "Bearer "+adminToken, []byte(nil))
	f.Add(uint8(6), "1/../../x", "", "", "bearer "+adminToken, []byte(nil))
	f.Add(uint8(7), "1", "1", "", "", []byte("{}"))
	f.Add(uint8(8), "1", "", "", "Bearer "+adminToken, []byte(`{"price_minor":1999,"currency":"EUR"}`))
	f.Add(uint8(8), "1", "", "", "Bearer "+adminToken, []byte(`{"price_minor":null,"currency":null}`))
	f.Add(uint8(8), "2", "", "", "Bearer "+adminToken, []byte(`{"price_minor":-1,"currency":"eur"}`))
	f.Add(uint8(3), "", "", "", "Bearer "+adminToken, []byte(`{"name":"x","total_stock":1,"starts_at":"2026-11-22T10:00:00Z","ends_at":"2026-11-22T11:00:00Z","price_minor":1,"currency":"EUR"}`))

	fake := newFake()
	checkBuy := fake.buy
	fake.buy = func(r seckill.BuyRequest) (seckill.Order, error) {
		if r.ActivityID < 1 || r.UserID < 1 || (r.IdempotencyKey != "" && !idempotencyKeyRE.MatchString(r.IdempotencyKey)) {
			panic("Buy got an invalid request") // answered 500: fails below
		}
		return checkBuy(r)
	}
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: pricedFake{fake}}))
	spec, err := apispec.Service()
	if err != nil {
		f.Fatal(err)
	}
	routes := []struct{ method, pattern string }{
		{"POST", "/api/v1/activities/%s/orders"},
		{"GET", "/api/v1/activities/%s"},
		{"GET", "/api/v1/activities/%s/orders/mine"},
		{"POST", "/admin/v1/activities"},
		{"POST", "/admin/v1/activities/%s/preload"},
		{"GET", "/admin/v1/activities/%s/audit"},
		{"POST", "/admin/v1/activities/%s/reconcile"},
		{"PATCH", "/api/v1/activities/%s"},
		{"POST", "/admin/v1/activities/%s/price"},
	}

	f.Fuzz(func(t *testing.T, route uint8, id, userID, key, auth string, body []byte) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.method, "/", bytes.NewReader(body))
		req.URL.Path = strings.Replace(r.pattern, "%s", id, 1)
		// Set headers without the checks of Header.Set, as a hostile peer might
		// get past a lenient proxy.
		for name, v := range map[string]string{"X-User-Id": userID, "Idempotency-Key": key, "Authorization": auth} {
			if v != "" {
				req.Header[name] = []string{v}
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		if err := spec.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", r.method, req.URL.Path, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		raw, _ := io.ReadAll(rec.Body)
		var answer struct {
			Error *errorDetail `json:"error"`
		}
		if err := json.Unmarshal(raw, &answer); err != nil {
			t.Fatalf("body %q is not JSON: %v", raw, err)
		}
		if rec.Code < 400 {
			return
		}
		if answer.Error == nil || !contractCodes[answer.Error.Code] || answer.Error.Message == "" {
			t.Fatalf("%d with body %s", rec.Code, raw)
		}
		if status, _ := statusOf(answer.Error.Code); status != rec.Code {
			t.Fatalf("code %s answered %d, want %d", answer.Error.Code, rec.Code, status)
		}
	})
}
