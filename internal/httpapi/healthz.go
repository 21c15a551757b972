package httpapi

import "net/http"

// healthzFront answers GET /healthz ahead of the engine and passes every
// other request on. The probe checks nothing (docs/API.md), so it needs
// none of the middleware (tracing, identity, limits, access log, metrics):
// an orchestrator probing each instance every second, and a load balancer
// more often, then costs the process the answer and nothing else. The
// answer carries the headers every answer carries.
type healthzFront struct{ next http.Handler }

var healthzBody = []byte(`{"status":"ok"}`)

func (f healthzFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != "/healthz" {
		f.next.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get("X-Request-ID")
	if !wellFormedRequestID(id) {
		id = newRequestID()
	}
	h := w.Header()
	h["X-Request-Id"] = []string{id}
	h["X-Content-Type-Options"] = headerNoSniff
	h["Cache-Control"] = headerNoStore
	h["Content-Type"] = headerJSON
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(healthzBody) // a probe that hung up needs no answer
}
