package order

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// Books reads every figure of the database side in one query: the held
// units (created and paid, not expired), all rows, the sold count, and a
// user with two rows once the unique key that keeps it out is gone; only
// the activities asked for, or all.
func TestBooks(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a, empty, other := newActivity(t, s, 10), newActivity(t, s, 3), newActivity(t, s, 5)
		paid, gone := payOrder(t, s, a, 1), payOrder(t, s, a, 2)
		payOrder(t, s, a, 3)
		payOrder(t, s, other, 1)
		for i, c := range []StatusChange{
			{OrderID: paid.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusPaid, PaidAt: time.Now()},
			{OrderID: gone.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired},
		} {
			c.ActivityID, c.Fence = a.ID, int64(10+i)
			if err := s.ChangeStatus(ctx, c); err != nil {
				t.Fatal(err)
			}
		}

		got, err := s.Books(ctx, a.ID, empty.ID, 999999)
		want := []seckill.Books{
			{ActivityID: a.ID, TotalStock: 10, Sold: 2, Held: 2, Rows: 3, Paid: 1, Expired: 1},
			{ActivityID: empty.ID, TotalStock: 3},
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Books(a, empty, unknown) = %+v, %v; want %+v", got, err, want)
		}
		all, err := s.Books(ctx)
		if err != nil || len(all) != 3 || all[2].ActivityID != other.ID || all[2].Held != 1 {
			t.Fatalf("Books() = %+v, %v; want the three activities", all, err)
		}

		// MariaDB's foreign key on activity_id needs an index of its own
		// once the unique one is gone.
		dropIndex := "ALTER TABLE orders ADD INDEX activity_only (activity_id), DROP INDEX uq_orders_activity_user"
		if s.db.Dialector.Name() == "sqlite" {
			dropIndex = "DROP INDEX uq_orders_activity_user"
		}
		if err := s.db.Exec(dropIndex).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.db.Exec("INSERT INTO orders (id, activity_id, user_id, status, fence, created_at) VALUES (?, ?, 3, ?, 20, ?)",
			"twice", a.ID, seckill.OrderStatusCreated, time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		got, err = s.Books(ctx, a.ID)
		if err != nil || len(got) != 1 || got[0].DuplicateUsers != 1 || got[0].Held != 3 || got[0].Rows != 4 {
			t.Fatalf("Books with user 3 twice = %+v, %v; want 1 duplicate user, 3 held of 4 rows", got, err)
		}
	})
}
