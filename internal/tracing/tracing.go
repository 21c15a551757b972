// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables, and carries the request id to outgoing calls.
//
// Tracing is off unless the environment asks for it (OTEL_TRACES_EXPORTER,
// or an OTLP endpoint: OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): then spans go to OTLP over
// http/protobuf (otlptracehttp, which reads the other OTEL_EXPORTER_OTLP_*
// variables itself), or to stdout with OTEL_TRACES_EXPORTER=console, sampled
// as OTEL_TRACES_SAMPLER says (parent-based always-on by default). OTLP over
// gRPC is not built in (it would compile google.golang.org/grpc into the
// binary, most of a cold build): OTEL_EXPORTER_OTLP_PROTOCOL=grpc stops
// start-up with a message saying so. A
// public request's traceparent and baggage are not trusted (internal/httpapi
// starts a trace of its own, linked to the caller's): the user check and the
// payment provider get this service's traceparent, when spans are on, and
// the request's X-Request-ID.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether getenv asks for traces to be exported.
func Enabled(getenv func(string) string) bool {
	if v := getenv("OTEL_TRACES_EXPORTER"); v != "" {
		return v != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the propagators and, when Enabled, a tracer provider
// exporting as the environment says. shutdown flushes and stops it (a no-op
// when tracing is off).
func Setup(ctx context.Context, getenv func(string) string, service, version string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if !Enabled(getenv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := newExporter(ctx, getenv)
	if err != nil {
		return nil, fmt.Errorf("tracing: exporter from OTEL_* variables: %w", err)
	}
	res, err := sdkresource.Merge(sdkresource.Default(), sdkresource.NewSchemaless(
		semconv.ServiceName(service), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, sdkresource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// newExporter builds the span exporter OTEL_TRACES_EXPORTER and
// OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL name: OTLP over http/protobuf (the
// default) or the console. gRPC is refused rather than silently sent over
// HTTP to a gRPC port.
func newExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	switch kind := getenv("OTEL_TRACES_EXPORTER"); kind {
	case "", "otlp":
	case "console":
		return stdouttrace.New()
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: this build exports otlp, console or none", kind)
	}
	protocol, name := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, name = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch protocol {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return nil, fmt.Errorf("%s=grpc: OTLP over gRPC is not built into this service; use http/protobuf (the collector's port 4318)", name)
	default:
		return nil, fmt.Errorf("%s=%q: this build speaks OTLP over http/protobuf only", name, protocol)
	}
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id, for Transport.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Transport wraps an outgoing client's transport: each call gets a client
// span and the W3C traceparent of the request it serves (otelhttp), and the
// X-Request-ID of that request, so the user check's and the provider's logs
// can be joined with this service's.
func Transport(next http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(requestIDTransport{next})
}

type requestIDTransport struct{ next http.RoundTripper }

func (t requestIDTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	id := RequestID(r.Context())
	if id == "" || r.Header.Get("X-Request-ID") != "" {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context()) // a RoundTripper must not change the caller's request
	r.Header.Set("X-Request-ID", id)
	return t.next.RoundTrip(r)
}

// Origin is what a call made on another goroutine's context (a purchase
// batch's lease) keeps of the request it serves: its id and its span, so the
// user check's call still carries that request's X-Request-ID and
// traceparent.
type Origin struct {
	requestID string
	span      trace.SpanContext
}

// OriginOf returns the request id and span ctx carries.
func OriginOf(ctx context.Context) Origin {
	return Origin{requestID: RequestID(ctx), span: trace.SpanContextFromContext(ctx)}
}

// Into returns ctx (its deadline and cancellation) with o's request id and
// span as the parent of the spans started under it.
func (o Origin) Into(ctx context.Context) context.Context {
	if o.requestID != "" {
		ctx = WithRequestID(ctx, o.requestID)
	}
	if o.span.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, o.span)
	}
	return ctx
}
