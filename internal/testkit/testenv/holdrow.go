package testenv

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"
)

// HoldRow locks the activity's row in the database at dsn from a
// transaction of its own, as an expiry whose COMMIT is slow, an operator's
// adjustment or a stuck session would, and returns once the row is locked.
// The row is released when release is called, after hold when hold is
// positive, or when the test ends, whichever comes first.
func HoldRow(t testing.TB, dsn string, activityID int64, hold time.Duration) (release func()) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("testenv: hold a row: %v", err)
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		_ = db.Close()
		t.Fatalf("testenv: hold a row: %v", err)
	}
	var id int64
	if err := tx.QueryRowContext(context.Background(), "SELECT id FROM activities WHERE id = ? FOR UPDATE", activityID).Scan(&id); err != nil {
		_ = tx.Rollback()
		_ = db.Close()
		t.Fatalf("testenv: hold the row of activity %d: %v", activityID, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback()
			_ = db.Close()
		})
	}
	if hold > 0 {
		time.AfterFunc(hold, release)
	}
	t.Cleanup(release)
	return release
}
