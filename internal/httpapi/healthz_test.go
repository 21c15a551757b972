package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// engineOf is the gin engine behind a handler of NewServer or NewServers.
func engineOf(h http.Handler) *gin.Engine { return h.(healthzFront).next.(*gin.Engine) }

// The probe answered ahead of the engine carries what every answer carries,
// and is the engine's answer byte for byte but for the request id.
func TestHealthzFrontAnswersAsTheEngineWould(t *testing.T) {
	h := newTestServer(Config{}, newFake())
	for _, id := range []string{"probe-1", ""} {
		front, engine := httptest.NewRecorder(), httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/healthz", nil)
		if id != "" {
			req.Header.Set("X-Request-ID", id)
		}
		h.ServeHTTP(front, req)
		engineOf(h).ServeHTTP(engine, req)
		if front.Code != engine.Code || front.Body.String() != engine.Body.String() {
			t.Errorf("front %d %q, engine %d %q", front.Code, front.Body, engine.Code, engine.Body)
		}
		for _, name := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options"} {
			if got, want := front.Header().Get(name), engine.Header().Get(name); got != want {
				t.Errorf("%s: front %q, engine %q", name, got, want)
			}
		}
		got := front.Header().Get("X-Request-ID")
		if id != "" && got != id || !wellFormedRequestID(got) {
			t.Errorf("X-Request-ID %q for the caller's %q", got, id)
		}
	}
	if rec := serve(h, request{"HEAD", "/healthz", "", nil}); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("HEAD /healthz: %d, want the engine's 405", rec.Code)
	}
}
