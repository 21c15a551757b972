//go:build !seckill_naive

package main

import (
	"log/slog"

	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// withNaive returns svc unchanged: the service's build has no way to run the
// seed incident's handler (naive.go, -tags seckill_naive, has it).
func withNaive(_ func(string) string, svc httpapi.Service, _ config, _ *backend, _ usercheck.Verifier, _ *slog.Logger) (httpapi.Service, func(), error) {
	return svc, func() {}, nil
}
