package httpapi

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/purchase"
)

// spanService records the trace context each purchase reached the service
// with: the one its user check's call will carry.
type spanService struct {
	*fakeService
	got trace.SpanContext
}

func (s *spanService) Buy(ctx context.Context, r purchase.BuyRequest) (seckill.Order, error) {
	s.got = trace.SpanContextFromContext(ctx)
	return s.fakeService.Buy(ctx, r)
}

// With tracing on, a purchase is a server span in the caller's trace. Off,
// no span is started, and the caller's trace still reaches the purchase.
func TestTraceRequests(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := []string{"traceparent", "00-" + traceID + "-00f067aa0ba902b7-01"}
	now := func() time.Time { return t0.Add(time.Minute) }

	for _, on := range []bool{true, false} {
		exp.Reset()
		svc := &spanService{fakeService: newFake()}
		h := NewServer(Config{Tracing: on, Now: now}, Deps{Service: svc})
		if rec := serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42", parent...)}); rec.Code != 201 {
			t.Fatalf("tracing %v: buy = %d %s", on, rec.Code, rec.Body)
		}
		if got := svc.got.TraceID().String(); got != traceID {
			t.Errorf("tracing %v: the purchase ran in trace %q, want the caller's %s", on, got, traceID)
		}
		spans := exp.GetSpans()
		switch {
		case on && (len(spans) != 1 || spans[0].SpanKind != trace.SpanKindServer || spans[0].Parent.TraceID().String() != traceID):
			t.Errorf("tracing on: spans %+v, want one server span in the caller's trace", spans)
		case !on && len(spans) != 0:
			t.Errorf("tracing off: %d spans, want none", len(spans))
		}
		// A request without a trace context runs in none.
		svc.got = trace.SpanContext{}
		if rec := serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("43")}); rec.Code != 201 {
			t.Fatalf("tracing %v: buy without traceparent = %d", on, rec.Code)
		}
		if !on && svc.got.IsValid() {
			t.Errorf("tracing off: a purchase without traceparent ran in trace %s", svc.got.TraceID())
		}
	}
}
