package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/XSAM/otelsql"
	"github.com/glebarez/sqlite"
	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/seckill-oss/seckill/migrations"
)

// SQLitePrefix marks a DSN as the embedded SQLite database: "sqlite:" followed
// by a file path or ":memory:".
const SQLitePrefix = "sqlite:"

// DefaultSQLiteFile is the embedded database Open uses when the DSN is empty:
// a file in the working directory, so a demo's orders survive a restart.
const DefaultSQLiteFile = "seckill.db"

// MySQL pool: a purchase holds one connection for one short transaction, and
// writers of one activity queue on its row lock anyway, so more connections
// than this only add contention on a small server.
const (
	maxOpenConns    = 16
	connMaxLifetime = 30 * time.Minute // below MySQL's wait_timeout, and lets DNS changes in
	connMaxIdleTime = 5 * time.Minute
	// Defaults of the DSN's timeout, readTimeout and writeTimeout.
	dialTimeout = 3 * time.Second
	ioTimeout   = 10 * time.Second
)

// sqliteBusyTimeout bounds how long a writer waits for another process's
// write (e.g. `seckill migrate` beside a running server) before failing.
const sqliteBusyTimeout = 5 * time.Second

// Options configure a Store beyond its DSN. The zero value is the default.
type Options struct {
	// Registry, when set, gets seckill_db_errors_total{op}: the store's
	// failed database calls (errmetrics.go).
	Registry prometheus.Registerer
	// Tracing wraps the MySQL connections in otelsql: a span per statement
	// under the global tracer provider. Off, statements cost no span.
	Tracing bool
	// SkipMigrations: Open does not apply migrations, and instead refuses a
	// database whose schema is behind (a *migrations.BehindError), so the
	// runtime user needs no DDL rights: a separate step migrates.
	SkipMigrations bool
}

// Open connects to the database named by dsn, applies pending migrations
// (unless opt.SkipMigrations) and returns a Store ready for use; Close releases it.
//
// dsn is a go-sql-driver/mysql DSN for MySQL or MariaDB, such as
// "user:pass@tcp(127.0.0.1:3306)/seckill" (parseTime=true and loc=UTC are
// forced, so times round-trip in UTC); or SQLitePrefix followed by a file path
// or ":memory:" for the embedded mode; or "" for the embedded mode in
// DefaultSQLiteFile. The path must not contain '?'.
//
// The embedded database uses one connection, so concurrent requests queue in
// the pool (bounded by their contexts) instead of failing with "database is
// locked", and every request sees the same ":memory:" database.
func Open(ctx context.Context, dsn string, opt Options) (*Store, error) {
	db, dialect, err := openSQL(dsn, opt.Tracing)
	if err != nil {
		return nil, err
	}
	migrate := migrations.Apply
	if opt.SkipMigrations {
		migrate = migrations.Check
	}
	if err := migrate(ctx, db, dialect); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("order: open: %w", err)
	}
	var dialector gorm.Dialector
	if dialect == migrations.SQLite {
		dialector = &sqlite.Dialector{Conn: db}
	} else {
		dialector = gormmysql.New(gormmysql.Config{Conn: db})
	}
	gdb, err := gorm.Open(dialector, &gorm.Config{
		// Every error is returned to the caller, who decides whether it is worth
		// a log line: a duplicate order is business as usual, not an SQL error.
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // every write runs its own transaction
		NowFunc:                now,
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("order: open: %w", err)
	}
	s := New(gdb)
	if opt.Registry != nil {
		if err := s.countErrors(opt.Registry); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	return s, nil
}

// Migrate applies pending migrations to the database named by dsn (as in
// Open) and closes its connection; `seckill migrate` runs it alone.
func Migrate(ctx context.Context, dsn string) error {
	db, dialect, err := openSQL(dsn, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := migrations.Apply(ctx, db, dialect); err != nil {
		return fmt.Errorf("order: migrate: %w", err)
	}
	return nil
}

// openSQL returns a pool for dsn, sized for its dialect, without connecting;
// with spans per MySQL statement when tracing.
func openSQL(dsn string, tracing bool) (*sql.DB, string, error) {
	if dsn == "" {
		dsn = SQLitePrefix + DefaultSQLiteFile
	}
	if path, ok := strings.CutPrefix(dsn, SQLitePrefix); ok {
		return openSQLite(path)
	}
	return openMySQL(dsn, tracing)
}

// openSQLite returns the embedded database's one-connection pool.
func openSQLite(path string) (*sql.DB, string, error) {
	if path == "" || strings.Contains(path, "?") {
		return nil, "", errors.New(`order: open: want "sqlite:<file path>" or "sqlite::memory:"`)
	}
	db, err := sql.Open(sqlite.DriverName, path+"?"+sqliteParams(path))
	if err != nil {
		return nil, "", fmt.Errorf("order: open SQLite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	// The one connection must never be closed while the Store lives: for
	// ":memory:" it is the database.
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, migrations.SQLite, nil
}

// openMySQL returns a MySQL or MariaDB pool with the driver settings the
// store relies on, whatever the DSN says.
func openMySQL(dsn string, tracing bool) (*sql.DB, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("order: open: not a go-sql-driver/mysql DSN: %w", err)
	}
	if err := CheckCharset(dsn); err != nil {
		return nil, "", fmt.Errorf("order: open: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// Statements are sent with their arguments in one round trip. (gorm's
	// PrepareStmt would prepare them again in every transaction, and the
	// order's statements only ever run in one.) Safe only in the charsets
	// CheckCharset lets through.
	cfg.InterpolateParams = true
	// Rows affected must mean rows changed: with clientFoundRows MariaDB
	// counts a duplicate that ON DUPLICATE KEY UPDATE id=id skipped as
	// affected, and a batch would take a kept-out order for a written one.
	// The batch insert reads its rows back when the count is short, and a
	// DSN flag must not make that count lie.
	cfg.ClientFoundRows = false
	// A statement on a connection that stopped answering (a hung COMMIT, a
	// partition) fails after these instead of holding its caller, and an
	// activity's purchase queue, for the minutes TCP takes to notice. Every
	// purchase statement also runs under its lock's lease context; these
	// bound the calls that do not. A DSN's own values win.
	if cfg.Timeout == 0 {
		cfg.Timeout = dialTimeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = ioTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = ioTimeout
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("order: open MySQL at %s: %w", cfg.Addr, err)
	}
	var db *sql.DB
	if tracing {
		db = otelsql.OpenDB(conn, otelsql.WithAttributes(semconv.DBSystemNameMySQL))
	} else {
		db = sql.OpenDB(conn)
	}
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxOpenConns)
	db.SetConnMaxLifetime(connMaxLifetime)
	db.SetConnMaxIdleTime(connMaxIdleTime)
	return db, migrations.MySQL, nil
}

// sqliteParams returns the connection settings of the embedded database:
// foreign keys on (SQLite's default is off), a busy timeout, and for files the
// write-ahead log so a reader never blocks the writer. Transactions begin
// IMMEDIATE so a transaction that will write takes the write lock up front,
// where the busy timeout applies, rather than failing at its first write.
func sqliteParams(path string) string {
	p := fmt.Sprintf("_pragma=foreign_keys(1)&_pragma=busy_timeout(%d)&_txlock=immediate", sqliteBusyTimeout.Milliseconds())
	if path != ":memory:" {
		p += "&_pragma=journal_mode(WAL)"
	}
	return p
}

// now is the clock of stored times: UTC at the microsecond precision of
// DATETIME(6), so what is returned equals what is read back.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
