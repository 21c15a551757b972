package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
)

// traceRequests starts a server span per request (continuing the caller's
// W3C traceparent) under the global tracer provider: a no-op one unless
// tracing.Setup installed an exporter. Probes and scrapes are not traced:
// they would be most of the spans and say nothing.
func traceRequests() gin.HandlerFunc {
	return otelgin.Middleware("seckill", otelgin.WithFilter(func(r *http.Request) bool {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			return false
		}
		return true
	}))
}
