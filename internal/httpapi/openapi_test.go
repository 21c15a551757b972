package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/docs"
	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// Every answer a test of this package receives through serve is checked
// against docs/openapi.yaml; violations are collected here and fail the run
// in TestMain, named by the line of the test that sent the request (serve
// has no *testing.T to report to).
var (
	apiViolationsMu sync.Mutex
	apiViolations   []string
)

// checkAnswer checks rec, the answer to req, against the document.
func checkAnswer(req *http.Request, rec *httptest.ResponseRecorder) {
	v, err := apispec.Service()
	if err == nil {
		err = v.Check(req, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	if err == nil {
		return
	}
	_, file, line, _ := runtime.Caller(2) // the test that called serve
	apiViolationsMu.Lock()
	defer apiViolationsMu.Unlock()
	apiViolations = append(apiViolations, fmt.Sprintf("%s:%d: %v", file, line, err))
}

// reportAPIViolations prints what checkAnswer collected and reports whether
// there was any.
func reportAPIViolations() bool {
	apiViolationsMu.Lock()
	defer apiViolationsMu.Unlock()
	for _, v := range apiViolations {
		fmt.Fprintln(os.Stderr, "answer breaks docs/openapi.yaml:", v)
	}
	return len(apiViolations) > 0
}

var ginParam = regexp.MustCompile(`:([A-Za-z_]+)`)

// Every route the service registers is in the document, with its method.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	// With waiting rooms, so their routes (served only then) are listed too.
	routes := engineOf(NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: roomsFake{newFake()}, Queue: routesOnlyQueue{}}))).Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d routes found: %v", len(routes), routes)
	}
	for _, r := range routes {
		path := ginParam.ReplaceAllString(r.Path, "{$1}")
		if !v.HasOperation(r.Method, path) {
			t.Errorf("route %s %s is not in docs/openapi.yaml (as %s %s)", r.Method, r.Path, r.Method, path)
		}
	}
}

// roomsFake is a Service that also turns waiting rooms on and off, and
// routesOnlyQueue a Queue; both only make the routes exist.
type roomsFake struct{ *fakeService }

func (roomsFake) SetWaitingRoom(context.Context, int64, time.Time) (seckill.ActivityView, error) {
	return seckill.ActivityView{}, nil
}

func (roomsFake) RemoveWaitingRoom(context.Context, int64) (seckill.ActivityView, error) {
	return seckill.ActivityView{}, nil
}

type routesOnlyQueue struct{}

func (routesOnlyQueue) Join(context.Context, int64, int64) (seckill.QueueStatus, error) {
	return seckill.QueueStatus{}, nil
}

func (routesOnlyQueue) Mine(context.Context, int64, int64) (seckill.QueueStatus, error) {
	return seckill.QueueStatus{}, nil
}

// The check can fail: an answer the document does not allow is reported.
func TestOpenAPICheckFails(t *testing.T) {
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	h := newTestServer(Config{}, newFake())
	req := httptest.NewRequest("GET", "http://seckill.test/api/v1/activities/1", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if err := v.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		t.Fatalf("a good answer fails: %v", err)
	}
	for name, tamper := range map[string]func(status *int, h http.Header, body *string){
		"unlisted status": func(s *int, _ http.Header, _ *string) { *s = http.StatusAccepted },
		"extra field":     func(_ *int, _ http.Header, b *string) { *b = `{"id":1,"extra":1}` },
		"missing field":   func(_ *int, _ http.Header, b *string) { *b = `{"id":1}` },
		"429 without Retry-After": func(s *int, h http.Header, b *string) {
			*s, *b = http.StatusTooManyRequests, `{"error":{"code":"busy","message":"m"}}`
		},
		"unknown error code": func(s *int, _ http.Header, b *string) {
			*s, *b = http.StatusNotFound, `{"error":{"code":"gone","message":"m"}}`
		},
		"not JSON": func(_ *int, h http.Header, _ *string) { h.Set("Content-Type", "text/html") },
	} {
		status, header, body := rec.Code, rec.Header().Clone(), rec.Body.String()
		tamper(&status, header, &body)
		if err := v.Check(req, status, header, []byte(body)); err == nil {
			t.Errorf("%s: no violation found", name)
		}
	}
}

// GET /openapi.yaml serves the document the binary embeds, byte for byte.
func TestOpenAPIServed(t *testing.T) {
	rec := serve(NewServer(Config{OpenAPI: docs.OpenAPI}, withParts(Deps{Service: newFake()})), request{"GET", "/openapi.yaml", "", nil})
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/yaml" || rec.Body.String() != string(docs.OpenAPI) {
		t.Errorf("GET /openapi.yaml: %d %q, %d bytes; want 200 application/yaml, the document", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	checkError(t, serve(newTestServer(Config{}, newFake()), request{"GET", "/openapi.yaml", "", nil}), http.StatusNotFound, codeNotFound)
	checkError(t, serve(newTestServer(Config{}, newFake()), request{"PUT", "/openapi.yaml", "", nil}), http.StatusMethodNotAllowed, codeMethodNotAllowed)
}
