package order

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

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

// A COMMIT on a link that stalls must end with the caller's lease, not after
// the DSN's readTimeout (10 s): database/sql's Commit takes no context.
// Here the link's replies are held 5 s from the moment the batch's insert is
// done, and the lease is 500 ms.
//
// Can fail: with tx.Commit() alone, "CreateOrders returned after 5.0s".
func TestCommitEndsWithTheLease(t *testing.T) {
	ctx := context.Background()
	cfg, p := testenv.ProxiedMySQL(t, testenv.MySQLConfig(t, testenv.MySQLDSN(t)))
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

// A write that ends without its COMMIT leaves a transaction open on a
// connection database/sql does not know is in one (transaction.go). That
// connection must be rolled back or closed, never pooled as it is: the next
// BEGIN on it would commit the abandoned orders, which their writer was told
// might not exist. Here the pool has one connection, so the next write gets
// the same one, and the transaction is abandoned two ways: the lease ends
// just before the COMMIT (nothing more can be sent under it, the ROLLBACK
// neither), and the COMMIT and the ROLLBACK both fail without being sent.
//
// Can fail: with rollback() pooling the connection when its ROLLBACK fails,
// "the abandoned order of user 1 was committed by the next write".
func TestAnAbandonedTransactionIsNotPooled(t *testing.T) {
	injected := errors.New("injected")
	cases := []struct {
		name  string
		abort func(tx *gorm.DB, cancel context.CancelFunc)
	}{
		{"the lease ended before COMMIT", func(tx *gorm.DB, cancel context.CancelFunc) {
			if beforeCommit(tx) {
				cancel()
			}
		}},
		{"COMMIT and ROLLBACK failed", func(tx *gorm.DB, _ context.CancelFunc) {
			if sql := tx.Statement.SQL.String(); sql == "COMMIT" || sql == "ROLLBACK" {
				_ = tx.AddError(injected)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, dsn := openMariaDB(t)
			reader := killerOf(t, dsn)
			pool, err := s.db.DB()
			if err != nil {
				t.Fatal(err)
			}
			pool.SetMaxOpenConns(1)
			a := newActivity(t, s, 10)

			lease, cancel := context.WithCancel(ctx)
			defer cancel()
			aborting := true
			err = s.db.Callback().Raw().Before("gorm:raw").Register("test:abort", func(tx *gorm.DB) {
				if aborting {
					c.abort(tx, cancel)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Orders.CreateOrders(lease, a.ID, 1, batchOf(1)); !errors.Is(err, ErrCommitUnknown) {
				t.Fatalf("the abandoned write: %v, want ErrCommitUnknown", err)
			}
			aborting = false
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			defer wcancel()
			if b, err := s.Orders.CreateOrders(wctx, a.ID, 2, batchOf(2)); err != nil || len(b.Written) != 1 {
				t.Fatalf("the next write: %+v, %v; want its order written", b, err)
			}
			if o, err := reader.Orders.OrderByUser(ctx, a.ID, 1); !errors.Is(err, ErrNotFound) {
				t.Errorf("the abandoned order of user 1 was committed by the next write: %+v, %v", o, err)
			}
			if n := count(t, reader, a.ID); n != 1 {
				t.Errorf("%d orders, want the next write's 1", n)
			}
		})
	}
}
