package order

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// backends runs f against each database the service supports: a fresh
// MariaDB database, and the embedded SQLite both in memory and in a file.
func backends(t *testing.T, f func(t *testing.T, s *Store)) {
	dsns := map[string]func(t *testing.T) string{
		"mariadb":       func(t *testing.T) string { return testenv.MySQLDSN(t) },
		"sqlite-memory": func(*testing.T) string { return "sqlite::memory:" },
		"sqlite-file":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "seckill.db") },
	}
	for _, name := range []string{"mariadb", "sqlite-memory", "sqlite-file"} {
		t.Run(name, func(t *testing.T) {
			f(t, openStore(t, dsns[name](t)))
		})
	}
}

// openStore is a Store on dsn, closed when the test ends.
func openStore(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func newActivity(t *testing.T, s *Store, total int64) seckill.Activity {
	t.Helper()
	start := time.Now().UTC().Truncate(time.Second)
	a, err := s.Activities.CreateActivity(context.Background(), seckill.Activity{
		Name: "Moutai 53%", TotalStock: total, StartsAt: start, EndsAt: start.Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func buy(s *Store, activityID, userID, fence int64, key string) error {
	_, err := createOrder(context.Background(), s.Orders, seckill.Order{
		ActivityID: activityID, UserID: userID, Fence: fence, IdempotencyKey: key,
	})
	return err
}

func count(t *testing.T, s *Store, activityID int64) int64 {
	t.Helper()
	n, err := s.Orders.CountOrders(context.Background(), activityID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestActivityRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		shanghai := time.FixedZone("CST", 8*3600)
		in := seckill.Activity{
			Name:       "Moutai 53% 500ml, 限量",
			TotalStock: 100,
			StartsAt:   time.Date(2030, 1, 2, 20, 0, 0, 123456789, shanghai),
			EndsAt:     time.Date(2030, 1, 2, 21, 0, 0, 0, shanghai),
		}
		created, err := s.Activities.CreateActivity(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if created.ID <= 0 || created.CreatedAt.IsZero() || created.CreatedAt.Location() != time.UTC {
			t.Errorf("created activity has ID %d, CreatedAt %v", created.ID, created.CreatedAt)
		}
		want := in
		want.ID, want.CreatedAt = created.ID, created.CreatedAt
		want.PerUserLimit = max(in.PerUserLimit, 1) // stored as the limit it means
		want.StartsAt = time.Date(2030, 1, 2, 12, 0, 0, 123456000, time.UTC)
		want.EndsAt = time.Date(2030, 1, 2, 13, 0, 0, 0, time.UTC)
		if created != want {
			t.Errorf("CreateActivity returned\n%+v, want\n%+v", created, want)
		}
		got, err := s.Activities.Activity(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		// == on time.Time compares locations too: times come back in UTC.
		if got != want {
			t.Errorf("Activity returned\n%+v, want\n%+v", got, want)
		}
		if _, err := s.Activities.Activity(ctx, created.ID+1000); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("Activity(missing): %v, want ErrActivityNotFound", err)
		}
		if _, err := s.Activities.Fence(ctx, created.ID+1000); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("Fence(missing): %v, want ErrActivityNotFound", err)
		}
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestCreateOrderAndLookups(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		before := time.Now().UTC().Add(-time.Second)
		o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: 42, Fence: 1, IdempotencyKey: "req-1"})
		if err != nil {
			t.Fatal(err)
		}
		if id, err := uuid.Parse(o.ID); err != nil || id.Version() != 7 {
			t.Errorf("order id %q is not a UUIDv7 (%v)", o.ID, err)
		}
		if o.Status != seckill.OrderStatusCreated || o.CreatedAt.Before(before) || o.CreatedAt.Location() != time.UTC {
			t.Errorf("order defaults: status %q, created at %v", o.Status, o.CreatedAt)
		}

		byUser, err := s.Orders.OrderByUser(ctx, a.ID, 42)
		if err != nil || byUser != o {
			t.Errorf("OrderByUser = %+v, %v; want %+v", byUser, err, o)
		}
		byKey, err := s.Orders.OrderByIdempotencyKey(ctx, 42, "req-1")
		if err != nil || byKey != o {
			t.Errorf("OrderByIdempotencyKey = %+v, %v; want %+v", byKey, err, o)
		}
		if _, err := s.Orders.OrderByUser(ctx, a.ID, 43); !errors.Is(err, ErrNotFound) {
			t.Errorf("OrderByUser(other user): %v, want ErrNotFound", err)
		}
		if _, err := s.Orders.OrderByIdempotencyKey(ctx, 42, "req-2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("OrderByIdempotencyKey(other key): %v, want ErrNotFound", err)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1", n)
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != 1 {
			t.Errorf("Fence = %d, %v; want 1", f, err)
		}

		// A caller-chosen id and time are kept, the time as stored.
		at := time.Date(2030, 5, 6, 7, 8, 9, 999_999_999, time.FixedZone("X", -3600))
		given, err := createOrder(ctx, s.Orders, seckill.Order{ID: "order-2", ActivityID: a.ID, UserID: 7, Fence: 2, CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Orders.OrderByUser(ctx, a.ID, 7)
		if err != nil {
			t.Fatal(err)
		}
		wantAt := time.Date(2030, 5, 6, 8, 8, 9, 999_999_000, time.UTC)
		if given != stored || stored.ID != "order-2" || stored.CreatedAt != wantAt || stored.IdempotencyKey != "" {
			t.Errorf("returned %+v, stored %+v; want id order-2 at %v without key", given, stored, wantAt)
		}

		if err := buy(s, a.ID+1000, 1, 10, ""); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("order for a missing activity: %v, want ErrActivityNotFound", err)
		}
	})
}

// TestOneOrderPerUser also shows that a refused insert gives back the unit and
// the fence its transaction had claimed.
func TestOneOrderPerUser(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 2)
		if err := buy(s, a.ID, 1, 1, ""); err != nil {
			t.Fatal(err)
		}
		if err := buy(s, a.ID, 1, 2, ""); !errors.Is(err, errDuplicate) {
			t.Fatalf("second order of user 1: %v, want errDuplicate", err)
		}
		// Fence 2 is still free and the second unit still unsold.
		if err := buy(s, a.ID, 2, 2, ""); err != nil {
			t.Fatalf("user 2 after the refused duplicate: %v", err)
		}
		if err := buy(s, a.ID, 3, 3, ""); !errors.Is(err, errSoldOut) {
			t.Errorf("third unit of two: %v, want errSoldOut", err)
		}
		if n := count(t, s, a.ID); n != 2 {
			t.Errorf("CountOrders = %d, want 2", n)
		}
	})
}

func TestIdempotencyKeyUniquePerUser(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a, b := newActivity(t, s, 10), newActivity(t, s, 10)
		steps := []struct {
			activity, user, fence int64
			key                   string
			want                  error
		}{
			{a.ID, 1, 1, "k", nil},
			{b.ID, 1, 1, "k", errKeyUsed}, // same user, same key, other order
			{a.ID, 2, 2, "k", nil},        // keys are per user
			{b.ID, 1, 1, "K", nil},        // keys are case-sensitive
			{a.ID, 3, 3, "", nil},         // no key, twice: NULLs do not collide
			{a.ID, 4, 4, "", nil},
		}
		for i, st := range steps {
			if err := buy(s, st.activity, st.user, st.fence, st.key); !errors.Is(err, st.want) {
				t.Errorf("step %d (user %d, key %q): %v, want %v", i, st.user, st.key, err, st.want)
			}
		}
		if n := count(t, s, a.ID) + count(t, s, b.ID); n != 5 {
			t.Errorf("%d orders, want 5", n)
		}
	})
}

// TestStaleFenceCannotWrite: once an order is written under fence 5, a holder
// of fence 5 or older (its lease expired, a newer grant wrote) is refused.
func TestStaleFenceCannotWrite(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		if err := buy(s, a.ID, 1, 5, ""); err != nil {
			t.Fatal(err)
		}
		for _, fence := range []int64{5, 3, 0} {
			if err := buy(s, a.ID, 2, fence, ""); !errors.Is(err, ErrStaleFence) {
				t.Errorf("fence %d after fence 5 wrote: %v, want ErrStaleFence", fence, err)
			}
		}
		if err := buy(s, a.ID, 2, 6, ""); err != nil {
			t.Errorf("fence 6: %v", err)
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != 6 {
			t.Errorf("Fence = %d, %v; want 6", f, err)
		}
		if n := count(t, s, a.ID); n != 2 {
			t.Errorf("CountOrders = %d, want 2", n)
		}
	})
}

// TestClaimFenceShutsOutOlderGrants: after a reload claims fence 7, a
// purchase still in flight under fence 6 cannot write.
func TestClaimFenceShutsOutOlderGrants(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, 10)
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 7); err != nil {
			t.Fatal(err)
		}
		if err := buy(s, a.ID, 1, 6, ""); !errors.Is(err, ErrStaleFence) {
			t.Errorf("order under fence 6 after claim 7: %v, want ErrStaleFence", err)
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID, 7); !errors.Is(err, ErrStaleFence) {
			t.Errorf("second claim of fence 7: %v, want ErrStaleFence", err)
		}
		if err := buy(s, a.ID, 1, 8, ""); err != nil {
			t.Errorf("order under fence 8: %v", err)
		}
		if _, err := s.Activities.ClaimFence(ctx, a.ID+1000, 9); !errors.Is(err, ErrActivityNotFound) {
			t.Errorf("claim on a missing activity: %v, want ErrActivityNotFound", err)
		}
		if n := count(t, s, a.ID); n != 1 {
			t.Errorf("CountOrders = %d, want 1 (a claim is not an order)", n)
		}
	})
}

// notOversold is the invariant the guard tests judge by.
func notOversold(orders, total int64) error {
	if orders > total {
		return fmt.Errorf("oversold: %d orders for %d units", orders, total)
	}
	return nil
}

// TestSQLGuardRefusesOversell: more buyers than units reach the database, as
// when Redis lost its data or was loaded wrong. The guarded write stops at the
// total; the seed's unguarded insert, run the same way, is caught overselling
// by the same check.
func TestSQLGuardRefusesOversell(t *testing.T) {
	const total, buyers = 5, 12
	backends(t, func(t *testing.T, s *Store) {
		guarded := newActivity(t, s, total)
		var soldOut int
		for u := int64(1); u <= buyers; u++ {
			switch err := buy(s, guarded.ID, u, u, ""); {
			case errors.Is(err, errSoldOut):
				soldOut++
			case err != nil:
				t.Fatalf("buyer %d: %v", u, err)
			}
		}
		if err := notOversold(count(t, s, guarded.ID), total); err != nil {
			t.Error(err)
		}
		if soldOut != buyers-total {
			t.Errorf("%d buyers refused as sold out, want %d", soldOut, buyers-total)
		}

		unguarded := newActivity(t, s, total)
		for u := int64(1); u <= buyers; u++ {
			row := s.Orders.newOrderRow(seckill.Order{ID: uuid.NewString(), ActivityID: unguarded.ID, UserID: u, Status: "created", Fence: u, CreatedAt: now()})
			if err := s.db.Create(&row).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := notOversold(count(t, s, unguarded.ID), total); err == nil {
			t.Error("the unguarded insert was not caught overselling: the check cannot fail")
		} else {
			t.Logf("unguarded insert, as expected: %v", err)
		}
	})
}

// TestConcurrentBuyersNeverExceedStock: many buyers at once, each retrying
// under a newer fence whenever another wrote first (as a new lock grant
// would), more buyers than units. The database must end with exactly the
// total, every other buyer told sold out.
func TestConcurrentBuyersNeverExceedStock(t *testing.T) {
	const total, buyers = 20, 60
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		a := newActivity(t, s, total)
		var (
			fences           atomic.Int64
			sold, soldOut    atomic.Int64
			stale            atomic.Int64
			highestSoldFence atomic.Int64
			start            = make(chan struct{})
			wg               sync.WaitGroup
		)
		for u := int64(1); u <= buyers; u++ {
			wg.Go(func() {
				<-start
				for {
					fence := fences.Add(1)
					o, err := createOrder(ctx, s.Orders, seckill.Order{ActivityID: a.ID, UserID: u, Fence: fence})
					switch {
					case errors.Is(err, ErrStaleFence):
						stale.Add(1)
						continue
					case errors.Is(err, errSoldOut):
						soldOut.Add(1)
					case err != nil:
						t.Errorf("buyer %d: %v", u, err)
					default:
						sold.Add(1)
						for {
							h := highestSoldFence.Load()
							if o.Fence <= h || highestSoldFence.CompareAndSwap(h, o.Fence) {
								break
							}
						}
					}
					return
				}
			})
		}
		close(start)
		wg.Wait()

		if sold.Load() != total || soldOut.Load() != buyers-total {
			t.Errorf("sold %d, sold out %d; want %d and %d", sold.Load(), soldOut.Load(), total, buyers-total)
		}
		if err := notOversold(count(t, s, a.ID), total); err != nil {
			t.Error(err)
		}
		if n := count(t, s, a.ID); n != sold.Load() {
			t.Errorf("CountOrders = %d, but %d buyers were told they bought", n, sold.Load())
		}
		if f, err := s.Activities.Fence(ctx, a.ID); err != nil || f != highestSoldFence.Load() {
			t.Errorf("Fence = %d, %v; want the highest fence that sold, %d", f, err, highestSoldFence.Load())
		}
		t.Logf("%d buyers, %d units: sold %d, sold out %d, %d stale-fence retries", buyers, total, sold.Load(), soldOut.Load(), stale.Load())
	})
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{testenv.MySQLDSN(t), "sqlite:" + filepath.Join(t.TempDir(), "m.db")} {
		for range 2 {
			if err := Migrate(ctx, dsn); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		newActivity(t, s, 1)
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestOpenRejectsBadDSN(t *testing.T) {
	for _, dsn := range []string{"sqlite:", "sqlite:/tmp/x.db?mode=ro", "not a dsn"} {
		if s, err := Open(context.Background(), dsn, Options{}); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}

// TestCommitFailureIsUnknown cuts the connection between the insert and the
// COMMIT (a KILL from another session, as a network failure or a server
// restart would): CreateOrder must not claim the order failed cleanly.
func TestCommitFailureIsUnknown(t *testing.T) {
	ctx := context.Background()
	s, dsn := openMariaDB(t)
	killer := killerOf(t, dsn)
	a := newActivity(t, s, 10)

	err := s.db.Callback().Raw().Before("gorm:raw").Register("test:kill_connection", func(tx *gorm.DB) {
		if beforeCommit(tx) {
			killConnection(t, tx, killer)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = buy(s, a.ID, 1, 1, "")
	if !errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("CreateOrder on a connection killed before COMMIT: %v, want ErrCommitUnknown", err)
	}
	t.Logf("as expected: %v", err)
	// Here the server rolled back; the caller learns it by looking.
	if _, err := killer.Orders.OrderByUser(ctx, a.ID, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("OrderByUser after the killed commit: %v, want ErrNotFound", err)
	}
	// Nor is its event there: it was in the transaction.
	if evs, err := killer.Outbox.EventsOf(ctx, a.ID); err != nil || len(evs) != 0 {
		t.Errorf("events after the killed commit: %v, %v; want none", evs, err)
	}
}

// openMariaDB opens a store on a fresh MariaDB database of the test's, closed
// when the test ends, and returns its DSN too.
func openMariaDB(t *testing.T) (*Store, string) {
	t.Helper()
	dsn := testenv.MySQLDSN(t)
	s, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dsn
}

// beforeCommit reports whether tx's statement is its transaction's COMMIT
// (which commit sends as a statement): the moment after a batch's last
// insert, its events'.
func beforeCommit(tx *gorm.DB) bool { return tx.Statement.SQL.String() == "COMMIT" }

// killerOf is a second store on s's database, from whose connection a test
// kills one of s's (killConnection).
func killerOf(t *testing.T, dsn string) *Store {
	t.Helper()
	killer, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = killer.Close() })
	return killer
}

// killConnection kills tx's connection from killer's, as a network failure
// or a server restart would.
func killConnection(t *testing.T, tx *gorm.DB, killer *Store) {
	var id int64
	if err := tx.Statement.ConnPool.QueryRowContext(tx.Statement.Context, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Errorf("connection id: %v", err)
		return
	}
	if err := killer.db.Exec("KILL ?", id).Error; err != nil {
		t.Errorf("kill connection %d: %v", id, err)
	}
}

// A COMMIT on a link that stalls must end with the caller's lease, not after
// the DSN's readTimeout (10 s): database/sql's Commit takes no context.
// Here the link's replies are held 5 s from the moment the batch's insert is
// done, and the lease is 500 ms.
//
// Can fail: with tx.Commit() alone, "CreateOrders returned after 5.0s".
func TestCommitEndsWithTheLease(t *testing.T) {
	ctx := context.Background()
	cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := toxic.New(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg.Addr = p.Addr()
	s, err := Open(ctx, cfg.FormatDSN(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := newActivity(t, s, 10)
	err = s.db.Callback().Raw().Before("gorm:raw").Register("test:stall_link", func(tx *gorm.DB) {
		if beforeCommit(tx) {
			p.SetReplyDelay(5 * time.Second)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	lease, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Orders.CreateOrders(lease, a.ID, 1, batchOf(1))
	took := time.Since(start)
	p.SetReplyDelay(0)
	if took > 2*time.Second {
		t.Fatalf("CreateOrders returned after %.1fs (%v); the lease was 500ms", took.Seconds(), err)
	}
	if !errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("CreateOrders on a stalled COMMIT: %v, want ErrCommitUnknown", err)
	}
}
