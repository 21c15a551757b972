package order

import (
	"gorm.io/gorm/clause"
)

// dialect is what the store's SQL does differently on the embedded SQLite
// database and on MySQL or MariaDB (possibly a Galera node), chosen once
// when the store opens. SQLite runs in one process on one connection with
// one writer at a time: a transaction that began (IMMEDIATE) holds the
// write lock, so it has no row locks to take or skip, no nodes to wait for
// or fence out, and no index to force.
type dialect struct {
	// causalPrefix is the prefix of a read that decides something (causal.go).
	causalPrefix string
	// forUpdate is the suffix of a raw locking read; locking is the same
	// for gorm's builder, and skipLocked its form that skips rows other
	// transactions hold (the delay queue's claim).
	forUpdate  string
	locking    []clause.Expression
	skipLocked []clause.Expression
	// primaryKeyOnly is the index hint that keeps a statement on rows named
	// by id (a group's activities, outbox rows) to primary-key look-ups.
	// Without it InnoDB may read a small table, or one whose statistics
	// predate its rows (activities created just before a sale), with a full
	// scan, and a locking read or UPDATE locks every row it reads: other
	// activities' rows too, which other groups, expiries and payments then
	// wait for, and two groups deadlock on.
	primaryKeyOnly string
	// skipDuplicates ends an INSERT that skips the rows a unique key keeps
	// out (rowinsert.go).
	skipDuplicates string
	// commitStatement: COMMIT is sent as a statement, under the caller's
	// context (transaction.go). SQLite's transactions are local and need
	// no bound, and its driver refuses a COMMIT it did not send.
	commitStatement bool
	// fenceOut: a look-up after a COMMIT of unknown outcome writes the row
	// it reads (causal.go fenceOut), for nodes that certify write sets.
	fenceOut bool
	// resizablePool: SetMaxConns sizes the pool. The embedded database
	// keeps its one connection: it is the database for ":memory:".
	resizablePool bool
}

// dialectOf is the dialect of gorm's dialector name: "sqlite", or MySQL's.
func dialectOf(name string) dialect {
	if name == "sqlite" {
		return dialect{skipDuplicates: " ON CONFLICT DO NOTHING"}
	}
	return dialect{
		causalPrefix:   "SET STATEMENT wsrep_sync_wait = 1 FOR ",
		forUpdate:      " FOR UPDATE",
		locking:        []clause.Expression{clause.Locking{Strength: clause.LockingStrengthUpdate}},
		skipLocked:     []clause.Expression{clause.Locking{Strength: clause.LockingStrengthUpdate, Options: clause.LockingOptionsSkipLocked}},
		primaryKeyOnly: " FORCE INDEX (PRIMARY)",
		// MySQL's no-op update leaves a duplicate unchanged and uncounted
		// (the connection never sets clientFoundRows: open.go); INSERT
		// IGNORE would also turn other errors into warnings.
		skipDuplicates:  " ON DUPLICATE KEY UPDATE `id` = `id`",
		commitStatement: true,
		fenceOut:        true,
		resizablePool:   true,
	}
}
