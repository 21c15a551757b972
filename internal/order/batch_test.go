package order

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func batchOf(users ...int64) []seckill.Order {
	orders := make([]seckill.Order, len(users))
	for i, u := range users {
		orders[i] = seckill.Order{UserID: u}
	}
	return orders
}

// A batch whose buyers each end differently: written, kept out by a unique
// key (an order already held, an idempotency key already used), or over the
// total. The activity's sold count moves by exactly the orders written.
func TestCreateOrdersBatchIsPerOrderExact(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a, other := newActivity(t, s, 5), newActivity(t, s, 5)
		if err := buy(s, a.ID, 1, 1, ""); err != nil { // user 1 already holds an order
			t.Fatal(err)
		}
		if err := buy(s, other.ID, 2, 1, "k2"); err != nil { // user 2 used key k2 elsewhere
			t.Fatal(err)
		}
		batch := batchOf(1, 2, 3, 4, 5, 6)
		batch[1].IdempotencyKey = "k2"
		b, err := s.Orders.CreateOrders(ctx, a.ID, 2, batch)
		if err != nil {
			t.Fatal(err)
		}
		users := func(orders []seckill.Order) (u []int64) {
			for _, o := range orders {
				u = append(u, o.UserID)
			}
			return u
		}
		// 4 units were left: users 1-4 claim them, 5 and 6 are over; 1 and 2
		// are kept out, so their 2 units stay unsold.
		if got := users(b.Written); len(got) != 2 || got[0] != 3 || got[1] != 4 {
			t.Errorf("written %v, want users [3 4]", got)
		}
		if got := users(b.KeptOut); len(got) != 2 || got[0] != 1 || got[1] != 2 {
			t.Errorf("taken %v, want users [1 2]", got)
		}
		if got := users(b.Over); len(got) != 2 || got[0] != 5 || got[1] != 6 {
			t.Errorf("over %v, want users [5 6]", got)
		}
		for _, o := range b.Written {
			if o.Fence != 2 || o.ActivityID != a.ID || o.ID == "" || o.Status != seckill.OrderStatusCreated {
				t.Errorf("written order %+v: want fence 2, activity %d, an id and status created", o, a.ID)
			}
		}
		if n, sd := count(t, s, a.ID), sold(t, s, a.ID); n != 3 || sd != 3 {
			t.Errorf("%d orders, sold %d; want 3 and 3", n, sd)
		}
		// The next grant gets the 2 units the kept-out orders left.
		b, err = s.Orders.CreateOrders(ctx, a.ID, 3, batchOf(5, 6, 7))
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Written) != 2 || len(b.Over) != 1 {
			t.Errorf("second batch: %d written, %d over; want 2 and 1", len(b.Written), len(b.Over))
		}
		b, err = s.Orders.CreateOrders(ctx, a.ID, 4, batchOf(8))
		if err != nil || len(b.Over) != 1 || len(b.Written) != 0 {
			t.Errorf("batch after sold out: %+v, %v; want all over", b, err)
		}
		if n, sd := count(t, s, a.ID), sold(t, s, a.ID); n != 5 || sd != 5 {
			t.Errorf("%d orders, sold %d; want 5 and 5", n, sd)
		}
	})
}

// A grant older than one that already wrote writes nothing: its lease ended
// and a newer holder went ahead.
func TestCreateOrdersRefusesAStaleFence(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		if _, err := s.Orders.CreateOrders(ctx, a.ID, 5, batchOf(1, 2)); err != nil {
			t.Fatal(err)
		}
		for _, fence := range []int64{5, 4} {
			if _, err := s.Orders.CreateOrders(ctx, a.ID, fence, batchOf(3, 4)); !errors.Is(err, ErrStaleFence) {
				t.Errorf("batch under fence %d after fence 5 wrote: %v, want ErrStaleFence", fence, err)
			}
		}
		if _, err := s.Orders.CreateOrders(ctx, 999999, 9, batchOf(3)); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("batch for a missing activity: %v, want ErrActivityNotFound", err)
		}
		if n, sd := count(t, s, a.ID), sold(t, s, a.ID); n != 2 || sd != 2 {
			t.Errorf("%d orders, sold %d; want 2 and 2", n, sd)
		}
	})
}

// After a COMMIT of unknown outcome, the look-up must see a commit that is
// still in flight: a plain read on another connection would not, declare the
// orders absent, and their units would go back and be sold twice. Here a
// batch's transaction is held open (claimed and inserted, not committed)
// while Written runs; Written must wait for it and then see its orders.
func TestWrittenWaitsForACommitInFlight(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.MySQLDSN(t)
	s, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newActivity(t, s, 10)

	o, err := fill(seckill.Order{ActivityID: a.ID, UserID: 1, Fence: 1})
	if err != nil {
		t.Fatal(err)
	}
	tx := s.db.Begin()
	defer tx.Rollback() // a no-op after the Commit below
	parts := []*part{{activityID: a.ID, fence: 1, rows: []orderRow{s.Orders.newOrderRow(o)}}}
	if err := claimGroup(tx, s.dialect, parts, false); err != nil {
		t.Fatal(err)
	}
	if _, err := insertGroup(tx, s.dialect, parts); err != nil {
		t.Fatal(err)
	}

	got, err := waitsForCommit(t, tx, "Written", func(ctx context.Context) (map[string]seckill.Order, error) {
		got, _, err := s.Orders.Written(ctx, a.ID, []string{o.ID})
		return got, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[o.ID]; !ok {
		t.Errorf("Written = %v after the commit landed, want order %s", got, o.ID)
	}
}

// A DSN with clientFoundRows=true makes MariaDB count a duplicate skipped by
// ON DUPLICATE KEY UPDATE as an affected row: the batch would then report the
// kept-out order as written (a 201 with no row) and leave sold one too high.
// Open forces the flag off.
func TestCreateOrdersExactUnderClientFoundRows(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	if strings.Contains(dsn, "?") {
		dsn += "&clientFoundRows=true"
	} else {
		dsn += "?clientFoundRows=true"
	}
	s, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newActivity(t, s, 5)
	if err := buy(s, a.ID, 1, 1, ""); err != nil {
		t.Fatal(err)
	}
	b, err := s.Orders.CreateOrders(context.Background(), a.ID, 2, batchOf(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Written) != 1 || b.Written[0].UserID != 2 || len(b.KeptOut) != 1 || b.KeptOut[0].UserID != 1 {
		t.Errorf("written %+v, taken %+v; want user 2 written and user 1 kept out", b.Written, b.KeptOut)
	}
	if n, sd := count(t, s, a.ID), sold(t, s, a.ID); n != 2 || sd != 2 {
		t.Errorf("%d orders, sold %d; want 2 and 2", n, sd)
	}
}
