package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// SQLite's twin of mysql/00013_end_before_start.sql: the activities'
// window check allows an empty window (a sale ended before its start).
// SQLite cannot alter a CHECK, and rebuilding the table is no way either:
// orders reference it, and dropping the old table fails that reference for
// good (even deferred), while foreign keys cannot be turned off inside the
// transaction goose runs a migration in, on the one connection the embedded
// mode has. Loosening a CHECK changes no stored row, so the table's
// definition is edited in place, as SQLite documents for removing a CHECK
// (ALTER TABLE, "Making Other Kinds Of Table Schema Changes"): in one
// transaction, with the schema's version raised so every connection reads
// the new definition. Down tightens it back the same way; it fails when a
// row has an empty window.
const sqliteWindowVersion = 13

// The window check before and after 00013, as 00001 wrote it.
const (
	windowStrict = "CHECK (ends_at > starts_at)"
	windowEmpty  = "CHECK (ends_at >= starts_at)"
)

// sqliteGoMigrations are the SQLite migrations written in Go.
func sqliteGoMigrations() []*goose.Migration {
	return []*goose.Migration{goose.NewGoMigration(sqliteWindowVersion,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return editActivities(ctx, tx, windowStrict, windowEmpty) }},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return tightenWindow(ctx, tx) }})}
}

// tightenWindow is Down: refused while a row holds an empty window, which
// the strict check would not have let in.
func tightenWindow(ctx context.Context, tx *sql.Tx) error {
	var empty int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM activities WHERE ends_at <= starts_at").Scan(&empty); err != nil {
		return fmt.Errorf("window check: %w", err)
	}
	if empty > 0 {
		return fmt.Errorf("window check: %d activities were ended before their start; their empty window needs the loose check", empty)
	}
	return editActivities(ctx, tx, windowEmpty, windowStrict)
}

// editActivities replaces the activities table's check from with to in its
// stored definition.
func editActivities(ctx context.Context, tx *sql.Tx, from, to string) error {
	var def string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'activities'").Scan(&def); err != nil {
		return fmt.Errorf("window check: %w", err)
	}
	if strings.Count(def, from) != 1 {
		return fmt.Errorf("window check: the activities table's definition does not hold %q once: %s", from, def)
	}
	var version int64
	if err := tx.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version); err != nil {
		return fmt.Errorf("window check: %w", err)
	}
	steps := []struct {
		q    string
		args []any
	}{
		{"PRAGMA writable_schema = ON", nil},
		{"UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'activities'", []any{strings.Replace(def, from, to, 1)}},
		{fmt.Sprintf("PRAGMA schema_version = %d", version+1), nil},
		{"PRAGMA writable_schema = OFF", nil},
	}
	for _, st := range steps {
		if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("window check: %w", err)
		}
	}
	var check string
	if err := tx.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil {
		return fmt.Errorf("window check: integrity check after the edit: %w", err)
	}
	if check != "ok" {
		return fmt.Errorf("window check: integrity check after the edit: %s", check)
	}
	return nil
}
