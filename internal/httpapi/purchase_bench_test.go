//go:build unix

package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	rediskeys "github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// The purchase path without the network: the whole handler (every
// middleware, the handler, the answer's JSON) served in-process by
// httptest, so what the benchmarks report is the service's own cost per
// answer, not the kernel's nor a load generator's. Each reports, besides
// ns/op (wall time over all goroutines: a throughput, noisy on a shared
// machine), allocs/op and cpu-µs/op: the process's CPU (getrusage) per
// answer, the steadier figure (loadtest/bench.sh measures the same per 2xx
// answer over HTTP). Compare:
//
//	go test -run '^$' -bench 'Purchase|Healthz' -benchtime 5000x ./internal/httpapi/
//
// BenchmarkPurchase is a real order: the service as cmd/seckill wires it
// (internal/testkit/wiring) on the real Redis and MariaDB of testenv,
// approve-all users, every buyer distinct, 64 at once so batches form as
// under load. BenchmarkPurchaseEdge is the same request against a service
// that answers at once (the edge alone: what internal/httpapi costs), and
// BenchmarkHealthz the floor every answer pays.

// benchBuyers are the goroutines a benchmark keeps busy: 32 per P, 64 on
// two cores, as bench.sh's wrk -c64.
const benchBuyers = 32

// errorLogger is the service's logger as bench.sh runs it
// (SECKILL_LOG_LEVEL=error): JSON, records below error dropped.
func errorLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

// serveParallel sends b.N requests that newRequest builds to h from
// benchBuyers goroutines per P, fails on an answer that is not want, and
// reports allocs/op and cpu-µs/op.
func serveParallel(b *testing.B, h http.Handler, want int, newRequest func(n int64) *http.Request) {
	b.Helper()
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(benchBuyers)
	b.ResetTimer()
	cpu0 := testenv.ProcessCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, newRequest(seq.Add(1)))
			if rec.Code != want {
				b.Errorf("answer %d, want %d: %s", rec.Code, want, rec.Body)
				return
			}
		}
	})
	cpu := testenv.ProcessCPU(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// purchaseRequest is buyer n's purchase of activity id, as wrk's
// loadtest/bench.lua sends it: no body, no idempotency key.
func purchaseRequest(id, n int64) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/activities/"+strconv.FormatInt(id, 10)+"/orders", nil)
	r.Header.Set("X-User-ID", strconv.FormatInt(n, 10))
	return r
}

func BenchmarkPurchase(b *testing.B) {
	ctx := context.Background()
	prefix, dsn := testenv.Prefix(b), testenv.MySQLDSN(b)
	svc, _ := wiring.OnReal(b, testenv.Redis(b), dsn, app.Config{Keys: rediskeys.NewSpace(prefix), Lease: lock.Policy{TTL: 2 * time.Second, CallTimeout: 500 * time.Millisecond, Wait: time.Minute}}, usercheck.ApproveAll{}, nil)
	now := time.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "bench", TotalStock: int64(b.N) + 1,
		StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	h := NewServer(Config{}, Deps{Service: svc, Logger: errorLogger()})
	serveParallel(b, h, http.StatusCreated, func(n int64) *http.Request { return purchaseRequest(a.ID, n) })
}

func BenchmarkPurchaseEdge(b *testing.B) {
	h := NewServer(Config{}, Deps{Service: newFake(), Logger: errorLogger()})
	serveParallel(b, h, http.StatusCreated, func(n int64) *http.Request { return purchaseRequest(1, n) })
}

func BenchmarkHealthz(b *testing.B) {
	h := NewServer(Config{}, Deps{Service: newFake(), Logger: errorLogger()})
	serveParallel(b, h, http.StatusOK, func(int64) *http.Request { return httptest.NewRequest(http.MethodGet, "/healthz", nil) })
}
