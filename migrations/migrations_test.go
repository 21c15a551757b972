package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	_ "github.com/glebarez/sqlite" // registers the "sqlite" database/sql driver
	_ "github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/migrations"
)

func openMySQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestApplyMySQLConcurrent starts several "instances" on one fresh database at
// once, as replicas behind a load balancer do: all must succeed, once each.
func TestApplyMySQLConcurrent(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const instances = 4
	var wg sync.WaitGroup
	errs := make([]error, instances)
	for i := range instances {
		db := openMySQL(t, dsn)
		wg.Go(func() { errs[i] = migrations.Apply(ctx, db, migrations.MySQL) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}

	db := openMySQL(t, dsn)
	var applied int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0").Scan(&applied); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("mysql/*.sql")
	if err != nil || len(files) < 2 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	if applied != len(files) {
		t.Errorf("goose_db_version holds %d applied migrations, want %d, one per file", applied, len(files))
	}
	assertSchema(ctx, t, db)
}

func TestApplySQLiteTwice(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "seckill.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for range 2 {
		if err := migrations.Apply(ctx, db, migrations.SQLite); err != nil {
			t.Fatal(err)
		}
	}
	assertSchema(ctx, t, db)
}

func TestApplyUnknownDialect(t *testing.T) {
	if err := migrations.Apply(context.Background(), &sql.DB{}, "postgres"); err == nil {
		t.Fatal("Apply with an unknown dialect succeeded")
	}
}

// assertSchema checks the constraints the service's safety rests on, through
// plain SQL that both dialects accept.
func assertSchema(ctx context.Context, t *testing.T, db *sql.DB) {
	t.Helper()
	const at = "2030-01-01 00:00:00"
	if _, err := db.ExecContext(ctx, "INSERT INTO activities (id, name, total_stock, starts_at, ends_at, created_at) VALUES (1, 'a', 1, ?, '2030-01-02 00:00:00', ?)", at, at); err != nil {
		t.Fatal(err)
	}
	insert := func(id string, user int64, key any) error {
		_, err := db.ExecContext(ctx, "INSERT INTO orders (id, activity_id, user_id, status, idempotency_key, fence, created_at) VALUES (?, 1, ?, 'created', ?, 1, ?)", id, user, key, at)
		return err
	}
	if err := insert("o1", 7, "k"); err != nil {
		t.Fatal(err)
	}
	if err := insert("o2", 7, nil); err == nil {
		t.Error("second order of user 7 for activity 1 was accepted")
	}
	if err := insert("o3", 8, nil); err != nil {
		t.Errorf("order without an idempotency key: %v", err)
	}
	if err := insert("o4", 9, nil); err != nil {
		t.Errorf("second order without an idempotency key (NULLs must not collide): %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE activities SET sold = total_stock + 1 WHERE id = 1"); err == nil {
		t.Error("sold above total_stock was accepted")
	}
	// An end before the start leaves an empty window; a reversed one is refused.
	if _, err := db.ExecContext(ctx, "UPDATE activities SET starts_at = ends_at WHERE id = 1"); err != nil {
		t.Errorf("an empty window (a sale ended before its start): %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE activities SET starts_at = '2030-01-03 00:00:00' WHERE id = 1"); err == nil {
		t.Error("a window ending before it starts was accepted")
	}
	if _, err := db.ExecContext(ctx, "UPDATE orders SET status = 'cancelled' WHERE id = 'o1'"); err == nil {
		t.Error("an order status outside the contract was accepted")
	}
	if _, err := db.ExecContext(ctx, "UPDATE orders SET status = 'expired', pay_by = ?, status_fence = 3 WHERE id = 'o1'", at); err != nil {
		t.Errorf("expiring an order: %v", err)
	}
}

// TestCheck: Check only reads, and says how far behind the schema is.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "check.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	latest, err := migrations.Latest(migrations.SQLite)
	if err != nil || latest < 5 {
		t.Fatalf("Latest = %d, %v", latest, err)
	}
	var behind *migrations.BehindError
	if err := migrations.Check(ctx, db, migrations.SQLite); !errors.As(err, &behind) || behind.Current != 0 || behind.Latest != latest {
		t.Fatalf("Check on an empty database = %v, want behind at 0 of %d", err, latest)
	}
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("Check created %d tables (%v), want none", tables, err)
	}
	if err := migrations.Apply(ctx, db, migrations.SQLite); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Check(ctx, db, migrations.SQLite); err != nil {
		t.Fatalf("Check after Apply = %v", err)
	}
}

// The SQLite edit of the activities' window check keeps every row, the
// orders' references to them (checked, as the embedded mode turns foreign
// keys on), and the id counter: an id handed out once, even to a row since
// deleted, never comes again; an empty window is then allowed.
// Can fail: without the edit, "an activity with an empty window after the
// edit: constraint failed: CHECK constraint failed: chk_activities_window".
func TestSQLiteWindowEditKeepsRowsAndIDs(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "rebuild.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, os.DirFS("sqlite"), goose.WithGoMigrations(migrations.SQLiteGoMigrations()...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	const at, ends = "2030-01-01 00:00:00", "2030-01-02 00:00:00"
	for _, id := range []int{1, 2} {
		if _, err := db.ExecContext(ctx, "INSERT INTO activities (id, name, total_stock, starts_at, ends_at, created_at, sold, per_user_limit) VALUES (?, 'a', 5, ?, ?, ?, 1, 3)", id, at, ends, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM activities WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (id, activity_id, user_id, status, fence, created_at) VALUES ('o1', 1, 7, 'created', 1, ?)", at); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var sold, limit int
	if err := db.QueryRowContext(ctx, "SELECT sold, per_user_limit FROM activities WHERE id = 1").Scan(&sold, &limit); err != nil || sold != 1 || limit != 3 {
		t.Fatalf("activity 1 after the edit: sold %d, limit %d, %v", sold, limit, err)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO activities (name, total_stock, starts_at, ends_at, created_at) VALUES ('b', 1, ?, ?, ?)", at, at, at)
	if err != nil {
		t.Fatalf("an activity with an empty window after the edit: %v", err)
	}
	if id, _ := res.LastInsertId(); id != 3 {
		t.Errorf("the next id after the edit is %d, want 3 (2 was handed out before)", id)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (id, activity_id, user_id, status, fence, created_at) VALUES ('o2', 99, 7, 'created', 1, ?)", at); err == nil {
		t.Error("an order of an activity that does not exist was accepted after the edit")
	}
	var fks int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_foreign_key_check").Scan(&fks); err != nil || fks != 0 {
		t.Errorf("foreign key check after the edit: %d violations, %v", fks, err)
	}
}
