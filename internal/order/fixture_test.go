package order

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
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

// waitsForCommit runs read while tx, whose writes it must wait for, is
// still open: read returning within 300 ms fails the test (what names it);
// then tx commits, and read's answer is returned.
func waitsForCommit[T any](t *testing.T, tx *gorm.DB, what string, read func(context.Context) (T, error)) (T, error) {
	t.Helper()
	type result struct {
		got T
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		got, err := read(ctx)
		done <- result{got, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("%s returned while the commit was in flight: %+v, %v", what, r.got, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	r := <-done
	return r.got, r.err
}
