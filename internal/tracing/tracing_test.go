package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill-oss/seckill/internal/tracing"
)

func TestEnabledOnlyWhenAsked(t *testing.T) {
	for env, want := range map[string]bool{
		"":                          false,
		"OTEL_TRACES_EXPORTER=none": false,
		"OTEL_TRACES_EXPORTER=otlp": true,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318":                  true,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://c:4318/v1/traces": true,
	} {
		getenv := func(k string) string {
			if env != "" && k+"="+env[len(k)+1:] == env {
				return env[len(k)+1:]
			}
			return ""
		}
		if got := tracing.Enabled(getenv); got != want {
			t.Errorf("Enabled(%q) = %v, want %v", env, got, want)
		}
	}
	shutdown, err := tracing.Setup(context.Background(), func(string) string { return "" }, "seckill", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An outgoing call made for a request carries its X-Request-ID and the W3C
// traceparent of its span.
func TestTransportForwardsRequestIDAndTraceparent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	var gotID, gotParent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID, gotParent = r.Header.Get("X-Request-ID"), r.Header.Get("traceparent")
	}))
	defer srv.Close()

	ctx, span := tp.Tracer("test").Start(context.Background(), "purchase")
	ctx = tracing.WithRequestID(ctx, "rid-42")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: tracing.Transport(http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	span.End()
	if gotID != "rid-42" {
		t.Errorf("X-Request-ID %q, want rid-42", gotID)
	}
	if want := span.SpanContext().TraceID().String(); len(gotParent) < 55 || gotParent[3:35] != want {
		t.Errorf("traceparent %q, want trace %s", gotParent, want)
	}
	if req.Header.Get("X-Request-ID") != "" {
		t.Error("the caller's request was changed")
	}
	if n := len(exp.GetSpans()); n < 2 {
		t.Errorf("%d spans, want the client span and its parent", n)
	}
}

// A call made on another context (a batch's lease) still carries the
// request's id and trace.
func TestOriginInto(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	reqCtx, span := tp.Tracer("test").Start(tracing.WithRequestID(context.Background(), "rid-7"), "request")
	defer span.End()
	lease, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := tracing.OriginOf(reqCtx).Into(lease)
	if tracing.RequestID(ctx) != "rid-7" {
		t.Errorf("request id %q", tracing.RequestID(ctx))
	}
	if got := trace.SpanContextFromContext(ctx).TraceID(); got != span.SpanContext().TraceID() {
		t.Errorf("trace %s, want %s", got, span.SpanContext().TraceID())
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("the lease's cancellation was lost")
	}
}
