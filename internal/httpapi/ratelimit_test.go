package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

func TestRateLimits(t *testing.T) {
	buyAs := func(h http.Handler, id string) *httptest.ResponseRecorder {
		return serve(h, request{"POST", "/api/v1/activities/1/orders", "", user(id)})
	}
	t.Run("per user", func(t *testing.T) {
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 2}, newFake())
		for i := range 2 {
			if rec := buyAs(h, "42"); rec.Code != 201 {
				t.Fatalf("attempt %d within burst: %d", i, rec.Code)
			}
		}
		rec := buyAs(h, "42")
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "100" {
			t.Errorf("Retry-After = %q, want 100 (one token at 0.01/s)", got)
		}
		if rec := buyAs(h, "43"); rec.Code != 201 {
			t.Errorf("another user limited too: %d", rec.Code)
		}
	})
	t.Run("global", func(t *testing.T) {
		h := newTestServer(Config{GlobalRate: 0.5, GlobalBurst: 1}, newFake())
		if rec := buyAs(h, "1"); rec.Code != 201 {
			t.Fatalf("first: %d", rec.Code)
		}
		rec := buyAs(h, "2")
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After = %q, want 2", got)
		}
	})
	// docs/API.md's precedence: the rate limit answers before the purchase
	// is looked at, so a holder past it gets 429, not already_purchased.
	t.Run("before already_purchased", func(t *testing.T) {
		f := newFake()
		f.buy = func(seckill.BuyRequest) (seckill.Order, error) {
			return seckill.Order{}, &seckill.Error{Code: seckill.EAlreadyPurchased, Message: "you have one", OrderID: "ord-9"}
		}
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 1}, f)
		checkError(t, buyAs(h, "42"), 409, seckill.EAlreadyPurchased)
		checkError(t, buyAs(h, "42"), 429, seckill.EBusy)
	})
	t.Run("off by default", func(t *testing.T) {
		h := newTestServer(Config{}, newFake())
		for range 50 {
			if rec := buyAs(h, "42"); rec.Code != 201 {
				t.Fatalf("limited without a limit: %d", rec.Code)
			}
		}
	})
	// The per-user read limit, when set, covers every other buyer route,
	// with a bucket of its own beside the purchase's, so a result page
	// polled never spends the purchase's attempts; off, reads are never 429.
	t.Run("per user on every buyer route", func(t *testing.T) {
		off := newTestServer(Config{UserRate: 0.01, UserBurst: 2}, newFake())
		for i := range 5 {
			if rec := serve(off, request{"GET", "/api/v1/activities/1/orders/mine", "", user("42")}); rec.Code != 200 {
				t.Fatalf("mine %d without a read limit: %d", i, rec.Code)
			}
		}
		h := newTestServer(Config{UserRate: 0.01, UserBurst: 2, ReadRate: 0.01, ReadBurst: 2}, newFake())
		const mine = "/api/v1/activities/1/orders/mine"
		for i := range 2 {
			if rec := serve(h, request{"GET", mine, "", user("42")}); rec.Code != 200 {
				t.Fatalf("mine %d within burst: %d", i, rec.Code)
			}
		}
		rec := serve(h, request{"GET", mine, "", user("42")})
		checkError(t, rec, 429, seckill.EBusy)
		if got := rec.Header().Get("Retry-After"); got != "100" {
			t.Errorf("Retry-After = %q, want 100", got)
		}
		// The activity read counts when it names the user.
		checkError(t, serve(h, request{"GET", "/api/v1/activities/1", "", user("42")}), 429, seckill.EBusy)
		// Without an X-User-ID, or with one that is not an id, it is not
		// limited per user (nor refused: the read needs no identity).
		for _, hdr := range [][]string{nil, user("x"), user("042")} {
			for range 3 {
				if rec := serve(h, request{"GET", "/api/v1/activities/1", "", hdr}); rec.Code != 200 {
					t.Fatalf("activity read with %v: %d", hdr, rec.Code)
				}
			}
		}
		// The purchase keeps its own bucket, and other users theirs.
		if rec := buyAs(h, "42"); rec.Code != 201 {
			t.Errorf("purchase after mine's bucket ran out: %d", rec.Code)
		}
		if rec := serve(h, request{"GET", mine, "", user("43")}); rec.Code == 429 {
			t.Errorf("another user's mine: %d", rec.Code)
		}
		// A signed deployment counts only verified identities on the read.
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		signed := newTestServer(Config{UserRate: 0.01, UserBurst: 1, ReadRate: 0.01, ReadBurst: 1, IdentitySecret: []byte(identitySecret), Now: func() time.Time { return now }}, newFake())
		for range 3 {
			if rec := serve(signed, request{"GET", "/api/v1/activities/1", "", user("42")}); rec.Code != 200 {
				t.Fatalf("unsigned X-User-ID spent user 42's bucket: %d", rec.Code)
			}
		}
		if rec := serve(signed, request{"GET", "/api/v1/activities/1", "", signedUser("42", now)}); rec.Code != 200 {
			t.Fatalf("signed read: %d", rec.Code)
		}
		checkError(t, serve(signed, request{"GET", "/api/v1/activities/1", "", signedUser("42", now)}), 429, seckill.EBusy)
	})
	t.Run("global on every public route but the probes", func(t *testing.T) {
		f := newFake()
		h := newTestServer(Config{GlobalRate: 0.5, GlobalBurst: 1, OpenAPI: []byte("openapi: 3.1.0\n")}, f)
		if rec := serve(h, request{"GET", "/api/v1/activities/1", "", nil}); rec.Code != 200 {
			t.Fatalf("first: %d", rec.Code)
		}
		for _, r := range []request{
			{"GET", "/api/v1/activities/1", "", nil},
			{"GET", "/api/v1/activities/1", "", user("7")},
			{"POST", "/api/v1/activities/1/orders", "", user("8")},
			{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
			{"GET", "/openapi.yaml", "", nil},
		} {
			rec := serve(h, r)
			checkError(t, rec, 429, seckill.EBusy)
			if got := rec.Header().Get("Retry-After"); got != "2" {
				t.Errorf("%s %s: Retry-After = %q, want 2", r.method, r.path, got)
			}
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			if rec := serve(h, request{"GET", path, "", nil}); rec.Code != 200 {
				t.Errorf("%s limited: %d", path, rec.Code)
			}
		}
	})
	t.Run("global off by default on every route", func(t *testing.T) {
		h := newTestServer(Config{}, newFake())
		for range 50 {
			for _, r := range []request{
				{"GET", "/api/v1/activities/1", "", user("42")},
				{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
			} {
				if rec := serve(h, r); rec.Code != 200 {
					t.Fatalf("%s limited without a limit: %d", r.path, rec.Code)
				}
			}
		}
	})
}

func TestUserBucketsForgetLeastRecentlyUsed(t *testing.T) {
	u := newUserBuckets(1, 1, 3)
	for id := int64(1); id <= 3; id++ {
		u.get(id).Allow() // drain
	}
	u.get(1) // 1 is now the most recent; 2 the least
	u.get(4) // evicts 2
	if n := u.byKey.Len(); n != 3 {
		t.Fatalf("kept %d buckets, want 3", n)
	}
	if u.byKey.Contains(2) {
		t.Error("least recently used user 2 was kept")
	}
	if u.get(1).Allow() {
		t.Error("user 1's drained bucket was replaced by a fresh one")
	}
}

// Beyond keepFull, the least recently used buckets are forgotten once full
// (a fresh bucket is the same), never while refilling.
func TestUserBucketsForgetFullOnes(t *testing.T) {
	u := newUserBuckets(0.001, 1, 100)
	u.keepFull = 2
	u.get(1)         // full
	u.get(2).Allow() // drained for 1000 s
	u.get(3)         // two kept however full: nothing forgotten
	if n := u.byKey.Len(); n != 3 {
		t.Fatalf("kept %d buckets, want 3", n)
	}
	u.get(4) // forgets full 1, stops at the keepFull limit
	if u.byKey.Contains(1) || !u.byKey.Contains(2) || u.byKey.Len() != 3 {
		t.Fatalf("kept %v, want [2 3 4]", u.byKey.Keys())
	}
	u.get(5) // the least recently used, 2, is refilling: kept
	if !u.byKey.Contains(2) {
		t.Fatal("user 2's refilling bucket was forgotten")
	}
	if u.get(2).Allow() {
		t.Error("user 2's drained bucket was replaced by a fresh one")
	}
	if b := newKeyedBuckets[string](1, 1, 100); b.keepFull != 0 {
		t.Error("per-address buckets forget full ones: only per-user ones may")
	}
}
