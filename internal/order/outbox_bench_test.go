package order

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// BenchmarkOutboxInsert inserts the created events of batches of 21 orders
// (a batch at 64 connections in loadtest/bench.sh) into MariaDB's outbox:
// with ids as EventID makes them, in id order as insertCreatedEvents sends
// them; the same ids in the batch's own order; and random ids (a hash
// alone, as a UUIDv5 was). It reports the table's bytes per event: InnoDB
// splits a page where a key lands out of order, and a half-empty page costs
// the buffer pool, the redo log and the CPU that writes them.
// Run with a fixed count, as the table's size is what differs:
//
//	go test -run '^$' -bench OutboxInsert -benchtime 5000x ./internal/order/
func BenchmarkOutboxInsert(b *testing.B) {
	for _, ids := range []struct {
		name           string
		sorted, random bool
	}{{"id-order", true, false}, {"batch-order", false, false}, {"random", false, true}} {
		b.Run(ids.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, testenv.MySQLDSN(b), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			rows := make([]eventRow, 21)
			events := 0
			for b.Loop() {
				at := time.Now()
				for i := range rows {
					id, err := uuid.NewV7()
					if err != nil {
						b.Fatal(err)
					}
					o := seckill.Order{ID: id.String(), ActivityID: 1, UserID: int64(events), Status: seckill.OrderStatusCreated, CreatedAt: at}
					rows[i] = newEventRow(o, 1, o.CreatedAt)
					if ids.random {
						rows[i].ID = uuid.NewString()
					}
					events++
				}
				if ids.sorted {
					slices.SortFunc(rows, func(a, b eventRow) int { return strings.Compare(a.ID, b.ID) })
				}
				if _, err := insertRows(s.db.WithContext(ctx), s.dialect, eventInsert, rows); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var size int64
			if err := s.db.Exec("ANALYZE TABLE order_events").Error; err != nil {
				b.Fatal(err)
			}
			if err := s.db.Raw(`SELECT data_length FROM information_schema.tables
				WHERE table_schema = DATABASE() AND table_name = 'order_events'`).Scan(&size).Error; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(size)/float64(events), "table-B/event")
		})
	}
}
