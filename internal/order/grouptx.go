package order

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
)

// writeGroup claims, inserts and commits the parts' orders in one
// transaction. A group that writes no order changes nothing, not even a
// fence: its transaction is rolled back.
//
// On MySQL the transaction runs on a connection of the group pool, whose
// sessions have autocommit off: the claim's locking read opens the
// transaction and the COMMIT statement ends it. database/sql's transaction
// would add two round trips to each group, a START TRANSACTION and, after
// the COMMIT sent as a statement (see commit), its own second COMMIT; on a
// box the sale keeps busy each round trip waits for the scheduler too, and
// one activity's groups are written one after the other.
func (s *Store) writeGroup(ctx context.Context, parts []*part, skipBusy bool) error {
	db := s.db.WithContext(ctx)
	if s.groupPool == nil {
		return writeGroupTx(db, parts, skipBusy)
	}
	conn, err := s.groupPool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	tx := db.Session(&gorm.Session{})
	tx.Statement.ConnPool = conn
	if counting, ok := s.db.ConnPool.(*countingPool); ok {
		tx.Statement.ConnPool = &countingPool{ConnPool: conn, db: counting.db, errs: counting.errs}
	}
	committed := false
	// On every other path, also if something below panics, the claimed
	// units are undone.
	defer func() {
		if !committed {
			rollback(ctx, conn)
		}
	}()
	write, err := claimAndInsert(tx, parts, skipBusy)
	if err != nil || !write {
		return err
	}
	committed = true
	if err := commitStatement(tx); err != nil {
		rollback(ctx, conn) // a no-op where the COMMIT's failure ended the transaction
		return err
	}
	return nil
}

// writeGroupTx is writeGroup in a database/sql transaction: SQLite's
// transactions begin IMMEDIATE, which takes the write lock up front.
func writeGroupTx(db *gorm.DB, parts []*part, skipBusy bool) error {
	tx := db.Begin()
	if tx.Error != nil {
		return fmt.Errorf("begin: %w", tx.Error)
	}
	// After a successful Commit this is a no-op; on every other path it undoes
	// the claimed units, also if something below panics.
	defer tx.Rollback()
	write, err := claimAndInsert(tx, parts, skipBusy)
	if err != nil || !write {
		return err
	}
	return commit(tx)
}

// claimAndInsert claims the parts' units and inserts their orders in tx, and
// reports whether any order was written, which only a COMMIT then keeps.
func claimAndInsert(tx *gorm.DB, parts []*part, skipBusy bool) (bool, error) {
	if err := claimGroup(tx, parts, skipBusy); err != nil {
		return false, err
	}
	claimed := slices.DeleteFunc(slices.Clone(parts), func(p *part) bool { return p.claimed == 0 })
	if len(claimed) == 0 {
		return false, nil
	}
	written, err := insertGroup(tx, claimed)
	return written > 0, err
}

// rollbackTimeout bounds the ROLLBACK of a group that did not commit, after
// which its connection is discarded instead.
const rollbackTimeout = 2 * time.Second

// rollback ends the transaction open on conn, on a context of its own: the
// caller's may be over, and a connection must not go back to the pool
// holding row locks. When the ROLLBACK fails the connection is discarded,
// and the server rolls back what it held as it goes.
func rollback(ctx context.Context, conn *sql.Conn) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, err := conn.ExecContext(rctx, "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}
