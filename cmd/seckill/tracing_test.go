package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A buyer's trace headers are not trusted: the user-verification service
// (called by the activity's batch on its lease) gets neither the buyer's
// traceparent nor their baggage, and gets the buyer's X-Request-ID only when
// it is well formed, else the one the service made up and answered with.
// (This test used to require the buyer's traceparent to be forwarded.)
func TestPurchaseForwardsOnlyAWellFormedRequestID(t *testing.T) {
	type seen struct{ id, parent, baggage string }
	var mu sync.Mutex
	got := map[string]seen{} // by X-User-ID
	users := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/users/"), "/eligibility")] = seen{r.Header.Get("X-Request-ID"), r.Header.Get("traceparent"), r.Header.Get("baggage")}
		mu.Unlock()
		w.Write([]byte(`{"eligible":true}`))
	}))
	defer users.Close()
	env := realEnv(t, 0)
	env["SECKILL_USERCHECK_URL"] = users.URL
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	id := createAndPreload(t, base, map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}, 3)
	url := fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	answered := map[string]string{}
	for user, rid := range map[string]string{"9": "rid with spaces", "10": strings.Repeat("r", 200), "11": "rid-buy.11_ok"} {
		resp := buyWith(t, url, map[string]string{"X-User-ID": user, "X-Request-ID": rid,
			"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01", "baggage": "user=evil"})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("buy as %s: %d", user, resp.StatusCode)
		}
		answered[user] = resp.Header.Get("X-Request-ID")
	}

	mu.Lock()
	defer mu.Unlock()
	for _, user := range []string{"9", "10", "11"} {
		s, ok := got[user]
		if !ok {
			t.Errorf("the user check was not called for user %s", user)
			continue
		}
		if strings.Contains(s.parent, traceID) {
			t.Errorf("user %s: user check got traceparent %q: the buyer's trace %s", user, s.parent, traceID)
		}
		if s.baggage != "" {
			t.Errorf("user %s: user check got baggage %q, want none", user, s.baggage)
		}
		if s.id == "" || s.id != answered[user] {
			t.Errorf("user %s: user check got X-Request-ID %q, want the one the buyer was answered (%q)", user, s.id, answered[user])
		}
	}
	if s := got["9"]; s.id == "rid with spaces" {
		t.Errorf("user check got the malformed X-Request-ID %q, want a generated one", s.id)
	}
	if s := got["10"]; len(s.id) == 200 {
		t.Errorf("user check got the 200-character X-Request-ID, want a generated one")
	}
	if s := got["11"]; s.id != "rid-buy.11_ok" {
		t.Errorf("user check got X-Request-ID %q, want the buyer's well-formed rid-buy.11_ok", s.id)
	}
}

func buyWith(t *testing.T, url string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
