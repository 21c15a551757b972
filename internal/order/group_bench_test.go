//go:build unix

package order

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// BenchmarkGroupCommit is the group commit as a sale at 64 connections runs
// it (loadtest/bench.sh: 21 buyers a batch, one activity a group): each op
// writes one batch of 21 orders with their created events, handed off to a
// relay that takes them, into MariaDB. Besides ns/op it reports what the
// service pays for an order in the group's transaction: allocs and the
// process's CPU (getrusage: the client's side; MariaDB is another process)
// per order. Compare:
//
//	go test -run '^$' -bench GroupCommit -benchtime 3000x ./internal/order/
func BenchmarkGroupCommit(b *testing.B) {
	const perBatch = 21
	ctx := context.Background()
	s, err := Open(ctx, testenv.MySQLDSN(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	s.Outbox.HandOffEvents(&Handoff{Owner: "bench", Lease: time.Minute, Take: func(EventBatch) bool { return true }})
	a := benchActivity(b, s)
	orders := make([]seckill.Order, perBatch)
	var fence, user int64
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := testenv.ProcessCPU(b)
	for b.Loop() {
		fence++
		for i := range orders {
			user++
			orders[i] = seckill.Order{UserID: user}
		}
		res := s.Orders.CreateOrderGroup(ctx, []Write{{ActivityID: a.ID, Fence: fence, Orders: orders}})
		if err := res[0].Err; err != nil {
			b.Fatal(err)
		}
		if n := len(res[0].Batch.Written); n != perBatch {
			b.Fatalf("%d orders written, want %d", n, perBatch)
		}
	}
	cpu := testenv.ProcessCPU(b) - cpu0
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(user), "allocs/order")
	b.ReportMetric(float64(cpu.Microseconds())/float64(user), "cpu-µs/order")
}
