package order

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// payOrder writes an order of user under a fresh activity grant and returns it.
func payOrder(t *testing.T, s *Store, a seckill.Activity, user int64) seckill.Order {
	t.Helper()
	o, err := createOrder(context.Background(), s.Orders, seckill.Order{ActivityID: a.ID, UserID: user, Fence: user})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func sold(t *testing.T, s *Store, activityID int64) int64 {
	t.Helper()
	var row activityRow
	if err := s.db.Select("sold").Take(&row, activityID).Error; err != nil {
		t.Fatal(err)
	}
	return row.Sold
}

// TestPaymentWindowSetsPayBy: with payments on an order gets pay_by =
// created_at + window; with them off, none (as before payments existed).
func TestPaymentWindowSetsPayBy(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 10)
		off := payOrder(t, s, a, 1)
		if !off.PayBy.IsZero() {
			t.Errorf("payments off: PayBy = %v, want none", off.PayBy)
		}
		s.Orders.SetPaymentWindow(90 * time.Second)
		on := payOrder(t, s, a, 2)
		if want := on.CreatedAt.Add(90 * time.Second); !on.PayBy.Equal(want) {
			t.Errorf("PayBy = %v, want created_at + 90s = %v", on.PayBy, want)
		}
		got, err := s.Orders.OrderByID(context.Background(), on.ID)
		if err != nil || !got.PayBy.Equal(on.PayBy) || got.Status != seckill.OrderStatusCreated {
			t.Errorf("OrderByID = %+v, %v; want it as written", got, err)
		}
	})
}

// TestStatusChangesOnlyFromItsStatusUnderANewerFence: the status write's two
// guards. A change applies once (the second finds the status moved on), and
// a grant no newer than the last writer's is refused; an expiry takes the
// unit off sold in the same transaction, and CountOrders stops counting it.
func TestStatusChangesOnlyFromItsStatusUnderANewerFence(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		o := payOrder(t, s, a, 1)
		payOrder(t, s, a, 2)
		expire := StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 5}

		if err := s.Orders.ChangeStatus(ctx, expire); err != nil {
			t.Fatal(err)
		}
		if n := sold(t, s, a.ID); n != 1 {
			t.Errorf("sold = %d after an expiry, want 1", n)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1: expired orders hold no unit", n)
		}
		// The same expiry again, by a newer grant: the status is no longer created.
		expire.Fence = 6
		if err := s.Orders.ChangeStatus(ctx, expire); !errors.Is(err, ErrStatusChanged) {
			t.Errorf("second expiry: %v, want ErrStatusChanged", err)
		}
		// A late payment under an older grant than the expiry's.
		late := StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusExpired, To: seckill.OrderStatusRefundRequired,
			PaidAt: time.Now(), Fence: 5}
		if err := s.Orders.ChangeStatus(ctx, late); !errors.Is(err, ErrStaleFence) {
			t.Errorf("change under fence 5 after fence 5 wrote: %v, want ErrStaleFence", err)
		}
		late.Fence = 7
		if err := s.Orders.ChangeStatus(ctx, late); err != nil {
			t.Fatal(err)
		}
		if n := sold(t, s, a.ID); n != 1 {
			t.Errorf("sold = %d after refund_required, want 1: the unit is not taken back", n)
		}
		got, err := s.Orders.OrderByID(ctx, o.ID)
		if err != nil || got.Status != seckill.OrderStatusRefundRequired || got.PaidAt.IsZero() || got.StatusFence != 7 {
			t.Errorf("order = %+v, %v; want refund_required, paid_at set, status fence 7", got, err)
		}
		counts, err := s.Orders.CountByStatus(ctx, a.ID)
		if err != nil || counts[seckill.OrderStatusCreated] != 1 || counts[seckill.OrderStatusRefundRequired] != 1 || len(counts) != 2 {
			t.Errorf("CountByStatus = %v, %v", counts, err)
		}
		if err := s.Orders.ChangeStatus(ctx, StatusChange{OrderID: "nope", ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusPaid, Fence: 9}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown order: %v, want ErrNotFound", err)
		}
		if err := s.Orders.ChangeStatus(ctx, StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusPaid, To: seckill.OrderStatusExpired, Fence: 9}); err == nil {
			t.Error("paid -> expired was accepted")
		}
	})
}

// TestConcurrentExpiriesGiveOneUnitBack: many writers expire the same order
// at once, each under its own (newer) grant, as instances whose locks were
// lost would: one wins, sold drops by exactly one.
func TestConcurrentExpiriesGiveOneUnitBack(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 10)
		o := payOrder(t, s, a, 1)
		payOrder(t, s, a, 2)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.Orders.ChangeStatus(context.Background(), StatusChange{OrderID: o.ID, ActivityID: a.ID,
					From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: int64(10 + i)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrStatusChanged) && !errors.Is(err, ErrStaleFence):
				t.Errorf("expiry: %v", err)
			}
		}
		if won != 1 || sold(t, s, a.ID) != 1 {
			t.Errorf("%d expiries applied, sold = %d; want 1 and 1", won, sold(t, s, a.ID))
		}
	})
}

// TestClaimDueSharesTheQueue: due created orders are claimed once across
// concurrent claimers (SKIP LOCKED on MariaDB) until the claim lapses; orders
// not yet due, or no longer created, are never handed out.
func TestClaimDueSharesTheQueue(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 100)
		s.Orders.SetPaymentWindow(time.Second)
		const due = 40
		for u := int64(1); u <= due; u++ {
			payOrder(t, s, a, u)
		}
		s.Orders.SetPaymentWindow(time.Hour)
		payOrder(t, s, a, 1000) // not due
		now := time.Now().Add(2 * time.Second)

		oldest, err := s.DelayQueue.OldestDue(ctx, now)
		if err != nil || oldest.IsZero() || !oldest.Before(now) {
			t.Errorf("OldestDue = %v, %v", oldest, err)
		}
		var (
			mu      sync.Mutex
			claimed = map[string]int{}
			wg      sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for {
					got, err := s.DelayQueue.ClaimDue(ctx, now, 3, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, o := range got {
						claimed[o.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(claimed) != due {
			t.Errorf("%d orders claimed, want the %d due", len(claimed), due)
		}
		for id, n := range claimed {
			if n != 1 {
				t.Errorf("order %s claimed %d times while its claim held", id, n)
			}
		}
		again, err := s.DelayQueue.ClaimDue(ctx, now.Add(2*time.Minute), 100, time.Minute)
		if err != nil || len(again) != due {
			t.Errorf("after the claims lapsed: %d claimed, %v; want %d", len(again), err, due)
		}
	})
}

// After an expiry whose COMMIT had an unknown outcome, the read-back must see
// a COMMIT still in flight: a plain read does not, the expiry skips giving
// the unit back, then the COMMIT lands: sold went down and Redis never got
// the unit. Here an expiry's transaction is held open (status changed and
// the unit taken off sold, not committed) while OrderLocked runs.
func TestOrderLockedWaitsForAnExpiryInFlight(t *testing.T) {
	s := openStore(t, testenv.MySQLDSN(t))
	a := newActivity(t, s, 10)
	o := payOrder(t, s, a, 1)

	tx := s.db.Begin()
	defer tx.Rollback() // a no-op after the Commit below
	if err := tx.Clauses(s.dialect.locking...).Select("id").Take(&activityRow{}, a.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(changeStatus, seckill.OrderStatusExpired, nil, nil, 5, o.ID, a.ID, seckill.OrderStatusCreated, 5).Error; err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(giveUnitsBack, o.ID, a.ID, o.ID).Error; err != nil {
		t.Fatal(err)
	}
	got, err := waitsForCommit(t, tx, "OrderLocked", func(ctx context.Context) (seckill.Order, error) {
		return s.Orders.OrderLocked(ctx, a.ID, o.ID)
	})
	if err != nil || got.Status != seckill.OrderStatusExpired || got.StatusFence != 5 {
		t.Fatalf("OrderLocked after the commit = %+v, %v; want the order expired under fence 5", got, err)
	}
}

// A buyer whose order is expiring buys again: the batch locks the activity
// (its claim) then, by the insert's unique-key check, the held order; an
// expiry that locked the order first and the activity second deadlocked
// with it. ChangeStatus now takes the activity first.
func TestExpiryAndRepurchaseDoNotDeadlock(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testenv.MySQLDSN(t))
	s.Orders.SetPaymentWindow(time.Hour)
	a := newActivity(t, s, 1000)
	var fence int64 = 1
	for round := range 60 {
		user := int64(round + 1)
		fence++
		b, err := s.Orders.CreateOrders(ctx, a.ID, fence, batchOf(user))
		if err != nil || len(b.Written) != 1 {
			t.Fatalf("round %d: buy: %+v, %v", round, b, err)
		}
		o := b.Written[0]
		fence++
		repurchase := fence
		var wg sync.WaitGroup
		var expErr, buyErr error
		wg.Go(func() {
			expErr = s.Orders.ChangeStatus(ctx, StatusChange{OrderID: o.ID, ActivityID: a.ID, From: seckill.OrderStatusCreated, To: seckill.OrderStatusExpired, Fence: 1})
		})
		wg.Go(func() {
			_, buyErr = s.Orders.CreateOrders(ctx, a.ID, repurchase, batchOf(user, user+10_000))
		})
		wg.Wait()
		for _, err := range []error{expErr, buyErr} {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1213 {
				t.Fatalf("round %d: deadlock between an expiry and a repurchase: %v", round, err)
			}
			if err != nil && !errors.Is(err, ErrStaleFence) {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

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
			if err := s.Orders.ChangeStatus(ctx, c); err != nil {
				t.Fatal(err)
			}
		}

		got, err := s.Activities.Books(ctx, a.ID, empty.ID, 999999)
		want := []seckill.Books{
			{ActivityID: a.ID, TotalStock: 10, Sold: 2, Held: 2, Rows: 3, Paid: 1, Expired: 1},
			{ActivityID: empty.ID, TotalStock: 3},
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Books(a, empty, unknown) = %+v, %v; want %+v", got, err, want)
		}
		all, err := s.Activities.Books(ctx)
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
		got, err = s.Activities.Books(ctx, a.ID)
		if err != nil || len(got) != 1 || got[0].DuplicateUsers != 1 || got[0].Held != 3 || got[0].Rows != 4 {
			t.Fatalf("Books with user 3 twice = %+v, %v; want 1 duplicate user, 3 held of 4 rows", got, err)
		}
	})
}
