package order

import (
	"database/sql"
	"database/sql/driver"
	"fmt"

	"gorm.io/gorm"
)

// transaction runs fn in one transaction of db (which carries the caller's
// context, its lease) and commits it when fn returns (true, nil); on every
// other path, a panic included, it rolls back. A failed COMMIT is
// ErrConflict when the cluster refused it (a certification conflict on
// Galera, 1213: rolled back), else ErrCommitUnknown (it may have landed; the
// locking read, Written or OrderLocked, tells).
//
// On MySQL the transaction is BEGIN and COMMIT statements on one pooled
// connection, so that the COMMIT runs under the context (a stalled link ends
// with the lease, not five leases later: database/sql's Tx.Commit takes no
// context and the driver watches none during it) and is the only one sent
// (a database/sql Tx would send its own after it: a round trip a batch).
// database/sql then does not know the connection is in a transaction, so a
// connection that ends here without COMMIT or ROLLBACK is closed, never
// pooled: the next BEGIN on it would commit what this one left.
//
// SQLite's transactions are local and need no bound, and its driver
// refuses a COMMIT it did not send: there it is a database/sql Tx.
func transaction(db *gorm.DB, d dialect, fn func(tx *gorm.DB) (bool, error)) error {
	if !d.commitStatement {
		return txTransaction(db, fn)
	}
	return db.Connection(func(on *gorm.DB) error {
		conn, ok := on.Statement.ConnPool.(*sql.Conn)
		if !ok {
			return fmt.Errorf("begin: gorm gave a %T, not a connection", on.Statement.ConnPool)
		}
		// A session, as Begin makes one: each statement chained on tx starts
		// from a copy of its Statement, not from the last statement's.
		tx := on.Session(&gorm.Session{Context: on.Statement.Context})
		if err := tx.Exec("BEGIN").Error; err != nil {
			discard(conn)
			return fmt.Errorf("begin: %w", err)
		}
		committed := false
		defer func() {
			if !committed {
				rollback(tx, conn)
			}
		}()
		if ok, err := fn(tx); err != nil || !ok {
			return err
		}
		if err := tx.Exec("COMMIT").Error; err != nil {
			if rolledBack(err) {
				return fmt.Errorf("%w: %w", ErrConflict, err)
			}
			return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
		}
		committed = true
		return nil
	})
}

// rollback ends the transaction on conn, within tx's context, or closes
// conn when it cannot: a context already ended (the lease) sends nothing,
// and a connection with an open transaction must not go back to the pool.
// The server rolls back a closed connection's transaction.
func rollback(tx *gorm.DB, conn *sql.Conn) {
	if tx.Exec("ROLLBACK").Error != nil {
		discard(conn)
	}
}

// discard closes conn's driver connection instead of pooling it.
func discard(conn *sql.Conn) {
	// database/sql closes a connection whose Raw call returns ErrBadConn.
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// txTransaction is transaction on a database/sql Tx.
func txTransaction(db *gorm.DB, fn func(tx *gorm.DB) (bool, error)) error {
	tx := db.Begin()
	if tx.Error != nil {
		return fmt.Errorf("begin: %w", tx.Error)
	}
	// After a successful Commit this is a no-op; on every other path it
	// undoes what fn wrote, also if fn panics.
	defer tx.Rollback()
	if ok, err := fn(tx); err != nil || !ok {
		return err
	}
	if err := tx.Commit().Error; err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return nil
}
