package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

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

// The exporter follows OTEL_TRACES_EXPORTER and the OTLP protocol variables:
// http/protobuf (the default) and the console build, gRPC is refused by name.
func TestSetupExporters(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		wantErr string
	}{
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, wantErr: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "zipkin"},
	} {
		shutdown, err := tracing.Setup(context.Background(), func(k string) string { return c.env[k] }, "seckill", "test")
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.wantErr)
		case err == nil:
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_ = shutdown(ctx) // nothing listens at the endpoint; flushing nothing is enough
			cancel()
		}
	}
	otel.SetTracerProvider(noop.NewTracerProvider())
}

// The service links the one trace exporter it uses, OTLP over HTTP, and not
// autoexport's set (OTLP over gRPC for traces, metrics and logs, the
// Prometheus and stdout metric and log exporters), which cmd/seckill had to
// compile on every cold build.
func TestServiceLinksOnlyTheHTTPTraceExporter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/seckill-oss/seckill/cmd/seckill").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	for _, pkg := range strings.Fields(string(out)) {
		deps[pkg] = true
	}
	if !deps["go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"] {
		t.Error("cmd/seckill does not link otlptracehttp")
	}
	for _, pkg := range []string{
		"go.opentelemetry.io/contrib/exporters/autoexport",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
		"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc",
		"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc",
		"go.opentelemetry.io/otel/exporters/prometheus",
	} {
		if deps[pkg] {
			t.Errorf("cmd/seckill links %s; see go mod why -m %s", pkg, pkg)
		}
	}
}
