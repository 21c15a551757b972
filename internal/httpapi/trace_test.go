package httpapi

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/tracing"
)

// spanService records what of its caller each purchase reached the service
// with: what its user check's call will carry.
type spanService struct {
	*fakeService
	got       trace.SpanContext
	baggage   baggage.Baggage
	requestID string
}

func (s *spanService) Buy(ctx context.Context, r seckill.BuyRequest) (seckill.Order, error) {
	s.got, s.baggage, s.requestID = trace.SpanContextFromContext(ctx), baggage.FromContext(ctx), tracing.RequestID(ctx)
	return s.fakeService.Buy(ctx, r)
}

// A buyer's trace headers are not trusted. With tracing on, a purchase is a
// server span of a trace of its own, linked to the caller's traceparent but
// not its child; off, no span is started and the caller's trace does not
// reach the purchase. Either way the caller's baggage is dropped, and their
// X-Request-ID kept only when well formed. (This test used to require the
// caller's trace to reach the purchase, as its parent.)
func TestTraceRequests(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	caller := []string{"traceparent", "00-" + traceID + "-00f067aa0ba902b7-01", "baggage", "user=evil"}
	now := func() time.Time { return t0.Add(time.Minute) }

	for _, on := range []bool{true, false} {
		exp.Reset()
		svc := &spanService{fakeService: newFake()}
		h := NewServer(Config{Tracing: on, Now: now}, withParts(Deps{Service: svc}))
		headers := user("42", append(caller, "X-Request-ID", "rid with spaces")...)
		rec := serve(h, request{"POST", "/api/v1/activities/1/orders", "", headers})
		if rec.Code != 201 {
			t.Fatalf("tracing %v: buy = %d %s", on, rec.Code, rec.Body)
		}
		if got := svc.got.TraceID().String(); got == traceID {
			t.Errorf("tracing %v: the purchase ran in the caller's trace %s", on, got)
		}
		if on && !svc.got.IsValid() {
			t.Errorf("tracing on: the purchase ran in no trace, want one of its own")
		}
		if !on && svc.got.IsValid() {
			t.Errorf("tracing off: the purchase ran in trace %s, want none", svc.got.TraceID())
		}
		if svc.baggage.Len() != 0 {
			t.Errorf("tracing %v: the purchase carries the caller's baggage %q", on, svc.baggage.String())
		}
		if id := rec.Header().Get("X-Request-ID"); svc.requestID != id || !wellFormedRequestID(id) {
			t.Errorf("tracing %v: request id %q, answered %q, want a generated one", on, svc.requestID, id)
		}
		spans := exp.GetSpans()
		switch {
		case on && (len(spans) != 1 || spans[0].SpanKind != trace.SpanKindServer || spans[0].Parent.IsValid()):
			t.Errorf("tracing on: spans %+v, want one server span without a parent", spans)
		case on && (len(spans[0].Links) != 1 || spans[0].Links[0].SpanContext.TraceID().String() != traceID):
			t.Errorf("tracing on: server span links %+v, want one to the caller's trace %s", spans[0].Links, traceID)
		case !on && len(spans) != 0:
			t.Errorf("tracing off: %d spans, want none", len(spans))
		}
		// A well-formed request id is kept; a request without a trace
		// context is a span without links.
		exp.Reset()
		svc.got = trace.SpanContext{}
		rec = serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("43", "X-Request-ID", "rid-43.ok_")})
		if rec.Code != 201 {
			t.Fatalf("tracing %v: buy without traceparent = %d", on, rec.Code)
		}
		if svc.requestID != "rid-43.ok_" || rec.Header().Get("X-Request-ID") != "rid-43.ok_" {
			t.Errorf("tracing %v: request id %q, answered %q, want the caller's rid-43.ok_", on, svc.requestID, rec.Header().Get("X-Request-ID"))
		}
		if !on && svc.got.IsValid() {
			t.Errorf("tracing off: a purchase without traceparent ran in trace %s", svc.got.TraceID())
		}
		if spans := exp.GetSpans(); on && (len(spans) != 1 || len(spans[0].Links) != 0) {
			t.Errorf("tracing on: spans %+v, want one without links", spans)
		}
	}
}
