package payment_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/payment"
)

func stubPut(t *testing.T, h http.Handler, path, token, body string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPut, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// TestStubConfigNeedsToken: a locked stub refuses to change where its signed
// callbacks go without the admin token, and refuses everyone when it has
// none; setting a payment stays open, as testers pay with it. Unlocked (the
// demo's in-process stub), the configuration is open.
func TestStubConfigNeedsToken(t *testing.T) {
	const evil = `{"latency":"0s","fail_rate":0,"callback_url":"http://attacker.example"}`
	newStub := func() *payment.Stub {
		s, err := payment.NewStub(payment.StubConfig{}, "http://127.0.0.1:1", []byte("secret"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	callbackURL := func(s *payment.Stub) string {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/stub/config", nil))
		return w.Body.String()
	}

	locked := newStub()
	locked.RequireAdminToken("stub-admin-token-0123456789")
	for _, c := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong", http.StatusUnauthorized}, {"stub-admin-token-0123456789", http.StatusOK}} {
		if code := stubPut(t, locked, "/stub/config", c.token, evil); code != c.want {
			t.Errorf("locked stub, token %q: PUT /stub/config = %d, want %d", c.token, code, c.want)
		}
		if c.want != http.StatusOK && strings.Contains(callbackURL(locked), "attacker") {
			t.Fatalf("locked stub, token %q: the callback URL changed anyway", c.token)
		}
	}
	if code := stubPut(t, locked, "/stub/payments/o1", "", `{"status":"paid"}`); code != http.StatusAccepted {
		t.Errorf("locked stub: PUT /stub/payments/o1 without a token = %d, want 202", code)
	}

	noToken := newStub()
	noToken.RequireAdminToken("")
	if code := stubPut(t, noToken, "/stub/config", "", evil); code != http.StatusForbidden {
		t.Errorf("stub locked without a token: PUT /stub/config = %d, want 403", code)
	}
	if code := stubPut(t, noToken, "/stub/config", "anything", evil); code != http.StatusForbidden {
		t.Errorf("stub locked without a token, any bearer: PUT /stub/config = %d, want 403", code)
	}

	open := newStub()
	if code := stubPut(t, open, "/stub/config", "", evil); code != http.StatusOK {
		t.Errorf("unlocked stub: PUT /stub/config = %d, want 200", code)
	}
}
