package e2e_test

import (
	"net/http"
	"testing"

	"github.com/seckill-oss/seckill/internal/testkit/apispec"
)

// checkedTransport sends through next and fails t for every answer that
// breaks docs/openapi.yaml, so every e2e test also checks the document
// against the running service. Benchmarks get next as it is: a check costs
// CPU on the cores the service runs on (BenchmarkCheck in internal/testkit/apispec).
func checkedTransport(t testing.TB, next http.RoundTripper) http.RoundTripper {
	t.Helper()
	if _, ok := t.(*testing.B); ok {
		return next
	}
	v, err := apispec.Service()
	if err != nil {
		t.Fatal(err)
	}
	return v.Transport(next, func(err error) { t.Error(err) })
}
