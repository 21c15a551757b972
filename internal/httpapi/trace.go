package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// traceRequests starts a server span per request (continuing the caller's
// W3C traceparent) when spans is true: tracing.Setup installed an exporter.
// Probes and scrapes are not traced: they would be most of the spans and say
// nothing. With tracing off it only carries the caller's trace context to
// the outgoing calls: otelgin under the no-op provider still builds a
// request's attributes and span, about a sixth of a purchase's allocations
// (loadtest/RESULTS.md, "Profile and batch timeline"), for spans nobody
// exports.
func traceRequests(spans bool) gin.HandlerFunc {
	if !spans {
		return carryTraceContext
	}
	return otelgin.Middleware("seckill", otelgin.WithFilter(func(r *http.Request) bool {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			return false
		}
		return true
	}))
}

// carryTraceContext puts the caller's trace context (traceparent, baggage)
// into the request's context, where the outgoing calls' transport finds it.
// A request without one is left as it is.
func carryTraceContext(c *gin.Context) {
	p := otel.GetTextMapPropagator()
	for _, f := range p.Fields() {
		if c.Request.Header.Get(f) != "" {
			c.Request = c.Request.WithContext(p.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header)))
			break
		}
	}
	c.Next()
}
