package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
)

// request is one HTTP request of a test; header holds name/value pairs, so a
// header can be sent twice.
type request struct {
	method, path, body string
	header             []string
}

func serve(h http.Handler, r request) *httptest.ResponseRecorder {
	return serveRequest(h, r.httpRequest())
}

// httpRequest is r as the server receives it.
func (r request) httpRequest() *http.Request {
	req := httptest.NewRequest(r.method, "http://seckill.test"+r.path, strings.NewReader(r.body))
	for i := 0; i+1 < len(r.header); i += 2 {
		req.Header.Add(r.header[i], r.header[i+1])
	}
	return req
}

// serveRequest serves req and checks the answer against the API's contract.
func serveRequest(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkAnswer(req, rec)
	return rec
}

// user and admin are the identity headers of a buyer and of ops.
func user(id string, more ...string) []string { return append([]string{"X-User-ID", id}, more...) }

var admin = []string{"Authorization", "Bearer " + adminToken}

// checkJSON fails unless rec is application/json and decodes it.
func checkJSON(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	return body
}

// checkError fails unless rec is the contract's error for code: the right
// status, {"error":{"code","message"}} and nothing else but order_id with
// already_purchased, and Retry-After exactly on 429 and 503.
func checkError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	body := checkJSON(t, rec)
	wantKeys := []string{"error"}
	if code == seckill.EAlreadyPurchased {
		wantKeys = append(wantKeys, "order_id")
	}
	if got := keys(body); !reflect.DeepEqual(got, keys(setOf(wantKeys...))) {
		t.Errorf("top-level keys = %v, want %v", got, wantKeys)
	}
	e, _ := body["error"].(map[string]any)
	if got := keys(e); !reflect.DeepEqual(got, []string{"code", "message"}) {
		t.Errorf("error keys = %v, want [code message]", got)
	}
	if e["code"] != code {
		t.Errorf("code = %v, want %s", e["code"], code)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Error("message is empty")
	}
	ra := rec.Header().Get("Retry-After")
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		var n int
		if _, err := fmt.Sscanf(ra, "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != ra {
			t.Errorf("Retry-After = %q, want whole seconds >= 1", ra)
		}
	default:
		if ra != "" {
			t.Errorf("Retry-After = %q on a %d", ra, status)
		}
	}
	return body
}

// checkBody fails unless rec has status and exactly the JSON want.
func checkBody(t *testing.T, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	got := checkJSON(t, rec)
	var w map[string]any
	dec := json.NewDecoder(strings.NewReader(want))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, w) {
		gb, _ := json.Marshal(got)
		t.Errorf("body = %s\nwant   %s", gb, want)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func setOf(ks ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range ks {
		m[k] = true
	}
	return m
}
