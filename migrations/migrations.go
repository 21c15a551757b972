// Package migrations holds the versioned schema of the service's database, one
// set of SQL files per dialect, embedded in the binary and applied with goose.
//
// The schema is written by hand rather than derived from Go structs (gorm's
// AutoMigrate) because the constraints are the point: the unique keys that
// give a buyer one order per activity and one outcome per idempotency key, and
// the `sold`/`fence` columns that let the database refuse an oversell even when
// everything in front of it went wrong. A reviewer must be able to read them.
//
// Applying is idempotent and safe to run from several instances at once: on
// MySQL/MariaDB the run is serialised with a named lock (GET_LOCK).
package migrations

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/pressly/goose/v3"
)

// Dialects Apply understands.
const (
	MySQL  = "mysql"  // MySQL 8 and MariaDB 10.11+
	SQLite = "sqlite" // the embedded mode (github.com/glebarez/sqlite)
)

//go:embed mysql/*.sql sqlite/*.sql
var files embed.FS

// Apply brings the database up to the newest schema version and returns when
// every pending migration has been applied, or with the first error (the
// failing migration's own changes are rolled back where the dialect allows
// transactional DDL). dialect is MySQL or SQLite. On MySQL, db must allow two
// connections: one holds the migration lock while goose works.
func Apply(ctx context.Context, db *sql.DB, dialect string) error {
	var gooseDialect goose.Dialect
	switch dialect {
	case MySQL:
		gooseDialect = goose.DialectMySQL
	case SQLite:
		// SQLite serialises writers itself, and the embedded mode is one process.
		gooseDialect = goose.DialectSQLite3
	default:
		return fmt.Errorf("migrations: unknown dialect %q (want %q or %q)", dialect, MySQL, SQLite)
	}
	fsys, err := fs.Sub(files, dialect)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSlog(slog.Default().With("component", "migrations"))}
	if dialect == SQLite {
		opts = append(opts, goose.WithGoMigrations(sqliteGoMigrations()...))
	}
	p, err := goose.NewProvider(gooseDialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if dialect == MySQL {
		unlock, err := lockMySQL(ctx, db)
		if err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		defer unlock()
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrations: apply %s schema: %w", dialect, err)
	}
	return nil
}

// mysqlLock, followed by the database name, names the MySQL user lock that
// serialises concurrent Apply runs on one database, e.g. several replicas
// starting at once against a fresh one. (User locks are server-wide.)
const mysqlLock = "seckill_migrations:"

// lockMySQL takes the migration lock on a connection of its own and returns
// the function that releases it. The lock covers all of goose's Up: goose's
// own session locker does not, as Up first creates the version table
// unlocked, and a second instance could then read that table before its first
// row is written. The lock belongs to the connection, so a crashed process
// frees it.
func lockMySQL(ctx context.Context, db *sql.DB) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	var got sql.NullInt64
	// GET_LOCK waits at most its timeout (seconds); ctx bounds the wait too.
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(CONCAT(?, DATABASE()), 60)", mysqlLock).Scan(&got); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	if got.Int64 != 1 {
		_ = conn.Close()
		return nil, errors.New("take migration lock: another migration held it for 60 s")
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(ctx, "DO RELEASE_LOCK(CONCAT(?, DATABASE()))", mysqlLock); err != nil {
			// Do not hand a connection that may still hold the lock back to the
			// pool: discard it, and the server frees the lock.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}, nil
}

// versionTable is goose's record of the applied versions (its default name).
const versionTable = "goose_db_version"

// BehindError is Check's answer when the database's schema is older than the
// newest version embedded in the binary.
type BehindError struct {
	Current, Latest int64 // Current 0: nothing applied, or no version table
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("migrations: the database schema is at version %d, this binary needs %d", e.Current, e.Latest)
}

// Check reports whether the database's schema is at the newest version, with
// a *BehindError when it is not. Unlike goose's own version queries it only
// reads: goose creates its version table when missing, and a runtime user
// that may not run DDL must be told the schema is behind, not "CREATE
// command denied".
func Check(ctx context.Context, db *sql.DB, dialect string) error {
	if dialect != MySQL && dialect != SQLite {
		return fmt.Errorf("migrations: unknown dialect %q (want %q or %q)", dialect, MySQL, SQLite)
	}
	latest, err := Latest(dialect)
	if err != nil {
		return err
	}
	var exists int
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	if dialect == SQLite {
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	}
	if err := db.QueryRowContext(ctx, q, versionTable).Scan(&exists); err != nil {
		return fmt.Errorf("migrations: read the schema version: %w", err)
	}
	var current sql.NullInt64
	if exists > 0 {
		err := db.QueryRowContext(ctx, "SELECT MAX(version_id) FROM "+versionTable+" WHERE is_applied").Scan(&current)
		if err != nil {
			return fmt.Errorf("migrations: read the schema version: %w", err)
		}
	}
	if current.Int64 < latest {
		return &BehindError{Current: current.Int64, Latest: latest}
	}
	return nil
}

// Latest is the newest schema version embedded for dialect: the highest
// version number among its files, as goose numbers them, and its Go
// migrations.
func Latest(dialect string) (int64, error) {
	names, err := fs.Glob(files, dialect+"/*.sql")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	var latest int64
	if dialect == SQLite {
		for _, m := range sqliteGoMigrations() {
			latest = max(latest, m.Version)
		}
	}
	for _, name := range names {
		v, err := goose.NumericComponent(name)
		if err != nil {
			return 0, fmt.Errorf("migrations: %s: %w", name, err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}
