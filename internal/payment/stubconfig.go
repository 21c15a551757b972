package payment

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/stubhttp"
)

// The stub's own behaviour (GET and PUT /stub/config), locked behind the
// admin token when asked.

// RequireAdminToken locks the routes that change the stub's own behaviour
// (PUT /stub/config: latency, failures, and where signed callbacks go):
// they then answer 401 without "Authorization: Bearer <token>", and 403 to
// everyone when token is "". Unlocked, anyone who reaches the stub could
// send the service's signed callbacks to a URL of their choosing. Setting a
// payment's outcome (PUT /stub/payments/{order_id}) stays open: it is how a
// tester pays an order.
func (s *Stub) RequireAdminToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configLocked, s.configSet = true, token != ""
	s.configToken = [sha256.Size]byte{}
	if token != "" {
		s.configToken = sha256.Sum256([]byte(token))
	}
}

// configAllowed reports whether r may change the stub's behaviour, and
// otherwise answers it.
func (s *Stub) configAllowed(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	locked, set, want := s.configLocked, s.configSet, s.configToken
	s.mu.Unlock()
	if !locked {
		return true
	}
	if !set {
		stubhttp.WriteError(w, http.StatusForbidden, "admin_disabled", "the stub's configuration is locked: start it with SECKILL_ADMIN_TOKEN and send it as a bearer token")
		return false
	}
	// Digests compared in constant time: the comparison does not tell how
	// much of a guess was right.
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	got := sha256.Sum256([]byte(token))
	if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		w.Header().Set("WWW-Authenticate", "Bearer")
		stubhttp.WriteError(w, http.StatusUnauthorized, "unauthorized", "PUT /stub/config needs Authorization: Bearer <admin token>")
		return false
	}
	return true
}

// validateAnswer checks what a payment says was paid.
func (s *Stub) handleGetConfig(w http.ResponseWriter, _ *http.Request) {
	stubhttp.WriteJSON(w, http.StatusOK, s.wireConfig())
}

func (s *Stub) wireConfig() stubConfigJSON {
	s.mu.Lock()
	defer s.mu.Unlock()
	return stubConfigJSON{Latency: s.cfg.Latency.String(), FailRate: s.cfg.FailRate, CallbackURL: s.callbackURL}
}

func (s *Stub) handlePutConfig(w http.ResponseWriter, r *http.Request) {
	if !s.configAllowed(w, r) {
		return
	}
	w0 := s.wireConfig()
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w0); err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "bad config: "+err.Error())
		return
	}
	latency, err := time.ParseDuration(w0.Latency)
	if err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "latency must be a Go duration such as 300ms")
		return
	}
	if w0.CallbackURL != "" && !strings.HasPrefix(w0.CallbackURL, "http://") && !strings.HasPrefix(w0.CallbackURL, "https://") {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "callback_url must be an http(s) URL")
		return
	}
	if w0.CallbackURL != "" && len(s.secret) == 0 {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "callbacks need a secret (SECKILL_PAYMENT_SECRET)")
		return
	}
	if err := s.SetConfig(StubConfig{Latency: latency, FailRate: w0.FailRate}); err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	s.SetCallbackURL(w0.CallbackURL)
	s.handleGetConfig(w, r)
}

func optionalDuration(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %s", v)
	}
	return d, err
}
