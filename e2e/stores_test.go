package e2e_test

import (
	"context"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
)

// What Redis and MariaDB hold, read directly rather than through a
// service: orders written, units in transit, the books, the locks.

// waitForOrders waits until the activities hold at least n orders in all.
func (s *stack) waitForOrders(activities []int64, n int, within time.Duration) {
	s.t.Helper()
	args := []any{}
	for _, a := range activities {
		args = append(args, a)
	}
	q := "SELECT COUNT(*) FROM orders WHERE activity_id IN (?" + strings.Repeat(",?", len(activities)-1) + ")"
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var got int
		if err := s.db.QueryRow(q, args...).Scan(&got); err != nil {
			s.t.Fatal(err)
		}
		if got >= n {
			return
		}
	}
	s.t.Fatalf("fewer than %d orders after %v", n, within)
}

// waitForUnitsInTransit waits until at least n units of the activities are
// deducted in Redis without their order in the database yet, and returns how
// many it saw. Redis is read before the database, so a commit in between
// makes it undercount, never overcount.
func (s *stack) waitForUnitsInTransit(activities []int64, total int64, n int64, within time.Duration) int64 {
	s.t.Helper()
	st := stock.New(s.rdb, keys.NewSpace(s.prefix))
	ctx := context.Background()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var remaining, orders int64
		for _, a := range activities {
			r, err := st.Remaining(ctx, a)
			if err != nil {
				s.t.Fatal(err)
			}
			remaining += r
		}
		for _, a := range activities {
			var c int64
			if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ?", a).Scan(&c); err != nil {
				s.t.Fatal(err)
			}
			orders += c
		}
		if got := total*int64(len(activities)) - remaining - orders; got >= n {
			return got
		}
	}
	s.t.Fatalf("never saw %d units between Redis and the database in %v", n, within)
	return 0
}

// checkBooksDirect checks the invariants in MariaDB and Redis themselves,
// for when no service is left to ask: the books (seckill.Books: no
// oversell, nobody with two orders, orders + Redis remaining == total, sold
// == orders) and every 201 has its row. It returns the orders holding a
// unit and the Redis remaining.
func (s *stack) checkBooksDirect(activity, total int64, createdOrders map[string]int64) (orders, remaining int64) {
	s.t.Helper()
	b := s.books(activity)
	if b.TotalStock != total {
		s.t.Errorf("activity %d has %d units, want %d", activity, b.TotalStock, total)
	}
	for _, v := range b.Violations() {
		s.t.Errorf("books: %s", v)
	}
	rows := s.ordersInDB(activity)
	for id, u := range createdOrders {
		if rows[u] == 0 {
			s.t.Errorf("activity %d: 201 for order %s of user %d has no row", activity, id, u)
		}
	}
	return b.Held, b.RedisRemaining
}

// awaitLockFree fails the test unless activity a's lock key is gone within
// 5 s. The queue's leader drops its hold right after it answers, not
// before: the key may outlive the last 201 by a moment, never by a TTL.
func (s *stack) awaitLockFree(a int64) {
	s.t.Helper()
	for gone := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := s.rdb.Exists(context.Background(), keys.NewSpace(s.prefix).Lock(a)).Result()
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(gone) {
			s.t.Fatalf("activity %d's lock still held 5 s after the sale (%d, %v): stranded until its TTL", a, n, err)
		}
	}
}

// heldLocks returns the activities whose lock key exists in Redis.
func (s *stack) heldLocks(activities []int64) []int64 {
	s.t.Helper()
	var held []int64
	for _, a := range activities {
		n, err := s.rdb.Exists(context.Background(), keys.NewSpace(s.prefix).Lock(a)).Result()
		if err != nil {
			s.t.Fatal(err)
		}
		if n > 0 {
			held = append(held, a)
		}
	}
	return held
}
