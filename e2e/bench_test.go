package e2e_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPurchaseHotActivity drives the purchase endpoint over loopback
// HTTP, against the real Redis and MariaDB, with every attempt on one
// activity and a distinct buyer. It reports attempts/s (any answer) and
// orders/s (201s); the rest are 429 busy, which is the lock shedding load.
//
//	go test -run '^$' -bench PurchaseHotActivity -benchtime 10s ./e2e/
func BenchmarkPurchaseHotActivity(b *testing.B) {
	b.Run("serial", benchmarkSerial)
	for _, buyers := range []int{1, 16} {
		b.Run(strconv.Itoa(buyers)+"xGOMAXPROCS", func(b *testing.B) { benchmarkHot(b, buyers) })
	}
}

// benchmarkSerial buys one unit at a time: every attempt is an order, so
// orders/s is one over the time a purchase holds the activity's lock.
func benchmarkSerial(b *testing.B) {
	s := newStack(b, stackOptions{})
	act := s.createActivity(10_000_000)
	b.ResetTimer()
	for i := range b.N {
		if r := s.buy(act, int64(i+1), nil); r.status != http.StatusCreated {
			b.Fatalf("buy: %d %s", r.status, r.raw)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
}

func benchmarkHot(b *testing.B, parallelism int) {
	s := newStack(b, stackOptions{})
	act := s.createActivity(10_000_000)
	var user, created, busy atomic.Int64
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := s.buy(act, user.Add(1), nil)
			switch r.status {
			case http.StatusCreated:
				created.Add(1)
			case http.StatusTooManyRequests:
				busy.Add(1)
			default:
				b.Errorf("unexpected answer %d %s", r.status, r.raw)
			}
		}
	})
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "attempts/s")
	b.ReportMetric(float64(created.Load())/secs, "orders/s")
	b.ReportMetric(float64(busy.Load())/float64(b.N), "busy-share")
}
