package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/docs"
	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// checkedTransport sends through next and fails t for every answer of the
// service that breaks docs/openapi.yaml. Answers of the user-verification
// stub (its API is under /v1/ and /stub/) are another contract and pass
// unchecked.
func checkedTransport(t *testing.T, next http.RoundTripper) http.RoundTripper {
	t.Helper()
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	checked := v.Transport(next, func(err error) { t.Error(err) })
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Path, "/v1/") || strings.HasPrefix(req.URL.Path, "/stub/") {
			return next.RoundTrip(req)
		}
		return checked.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The binary serves the document it embeds at /openapi.yaml.
func TestServesOpenAPI(t *testing.T) {
	p := start(t, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0"}, "demo")
	code, body := getText(t, "http://"+p.addr()+"/openapi.yaml")
	if code != http.StatusOK || body != string(docs.OpenAPI) {
		t.Fatalf("GET /openapi.yaml: %d, %d bytes; want 200 and docs/openapi.yaml (%d bytes)", code, len(body), len(docs.OpenAPI))
	}
}
