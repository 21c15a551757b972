package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// traceRequests starts a server span per request when spans is true:
// tracing.Setup installed an exporter. Probes and scrapes are not traced:
// they would be most of the spans and say nothing.
//
// A public request's trace headers are the buyer's to set, so none of them
// is trusted: every request starts a trace of its own, the caller's
// traceparent kept only as a link of the server span (an operator can still
// follow it), never as its parent, and the caller's baggage is dropped. Were
// they carried, the user check and the payment provider would receive
// whatever trace id and baggage a buyer chose, under this service's name.
//
// With tracing off nothing is started and nothing of the caller's is
// carried: otelgin under the no-op provider still builds a request's
// attributes and span, about a sixth of a purchase's allocations
// (loadtest/RESULTS.md, "Profile and batch timeline"), for spans nobody
// exports. The outgoing calls are then joined by X-Request-ID alone.
func traceRequests(spans bool) gin.HandlerFunc {
	if !spans {
		return func(c *gin.Context) { c.Next() }
	}
	return otelgin.Middleware("seckill",
		otelgin.WithPropagators(callerLinkPropagator{}),
		otelgin.WithTracerProvider(linkingProvider{}),
		otelgin.WithFilter(func(r *http.Request) bool {
			switch r.URL.Path {
			case "/healthz", "/readyz", "/metrics":
				return false
			}
			return true
		}))
}

type callerSpanKey struct{}

// callerLinkPropagator reads the caller's W3C traceparent into the
// request's context as a span to link to, not as the parent otelgin would
// make it; baggage and everything else is ignored. It injects nothing: it
// only ever reads a public request.
type callerLinkPropagator struct{}

func (callerLinkPropagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		return ctx
	}
	return context.WithValue(ctx, callerSpanKey{}, sc)
}

func (callerLinkPropagator) Inject(context.Context, propagation.TextMapCarrier) {}

func (callerLinkPropagator) Fields() []string { return propagation.TraceContext{}.Fields() }

// linkingProvider is the global tracer provider (looked up per tracer, so a
// provider installed later is used) whose spans are new roots, linked to
// the caller's span callerLinkPropagator found.
type linkingProvider struct{ embedded.TracerProvider }

func (linkingProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return linkingTracer{t: otel.GetTracerProvider().Tracer(name, opts...)}
}

type linkingTracer struct {
	embedded.Tracer
	t trace.Tracer
}

func (l linkingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	opts = append(opts, trace.WithNewRoot())
	if sc, ok := ctx.Value(callerSpanKey{}).(trace.SpanContext); ok {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return l.t.Start(ctx, name, opts...)
}
