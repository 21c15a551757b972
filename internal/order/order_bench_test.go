package order

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// BenchmarkCreateOrder measures the order write, the one database transaction
// of a purchase, and reports orders/s.
//
//   - hot-activity: one activity, one writer at a time with a rising fence, as
//     the per-activity lock makes it in the service: the ceiling of one hot
//     sale's order rate on this database.
//   - parallel-activities: GOMAXPROCS writers, each on an activity of its own.
func BenchmarkCreateOrder(b *testing.B) {
	for _, backend := range []struct{ name, dsn string }{
		{"mariadb", testenv.MySQLDSN(b)},
		{"sqlite-file", "sqlite:" + filepath.Join(b.TempDir(), "bench.db")},
	} {
		s, err := Open(context.Background(), backend.dsn, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })

		b.Run(backend.name+"/hot-activity", func(b *testing.B) {
			ctx := context.Background()
			a := benchActivity(b, s)
			var user int64
			for b.Loop() {
				user++
				if _, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: user, Fence: user}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(user)/b.Elapsed().Seconds(), "orders/s")
		})

		b.Run(backend.name+"/parallel-activities", func(b *testing.B) {
			ctx := context.Background()
			var orders atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				a := benchActivity(b, s)
				var user int64
				for pb.Next() {
					user++
					if _, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: user, Fence: user}); err != nil {
						b.Error(err)
						return
					}
				}
				orders.Add(user)
			})
			b.ReportMetric(float64(orders.Load())/b.Elapsed().Seconds(), "orders/s")
		})
	}
}

func benchActivity(b *testing.B, s *Store) seckill.Activity {
	start := time.Now().UTC()
	a, err := s.Activities.CreateActivity(context.Background(), seckill.Activity{
		Name: "bench", TotalStock: 10_000_000, StartsAt: start, EndsAt: start.Add(time.Hour),
	})
	if err != nil {
		b.Fatal(err)
	}
	return a
}
