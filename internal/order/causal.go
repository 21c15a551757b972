package order

import (
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// On a MariaDB Galera cluster a node applies the write sets the others
// committed a little after they committed: a read on the node that became
// the writer after a failover can miss a commit the old writer
// acknowledged. The reads that decide something (the look-up after a COMMIT
// of unknown outcome, the expiry's read of its order, reconcile's and the
// audit's read of the books) first wait until the node has applied every
// write set committed before them: MariaDB's per-statement
// `SET STATEMENT wsrep_sync_wait = 1 FOR ...`, which costs no extra round
// trip, waits only on Galera (a plain server has nothing to wait for), and
// leaves the connection as it was. Only there: on Galera each wait takes as
// long as the cluster's apply lag.
func (d dialect) causal(query string) string { return d.causalPrefix + query }

// lockActivity reads cols of the activity's row into dest with a causal,
// locking read (FOR UPDATE where the dialect has it; SQLite's transactions
// hold its one writer lock already). ErrActivityNotFound when there is none.
func lockActivity(tx *gorm.DB, d dialect, activityID int64, cols string, dest *activityRow) error {
	q := "SELECT " + cols + " FROM activities WHERE id = ?" + d.forUpdate
	res := tx.Raw(d.causal(q), activityID).Scan(dest)
	switch {
	case res.Error != nil:
		return fmt.Errorf("order: lock activity %d: %w", activityID, res.Error)
	case res.RowsAffected == 0:
		return activityErr(activityID, gorm.ErrRecordNotFound)
	}
	return nil
}

// ErrConflict: the cluster refused the transaction's write set (a
// certification conflict with a transaction committed on another node,
// MariaDB error 1213 at COMMIT): it was rolled back, so nothing was written.
// Unlike ErrCommitUnknown there is nothing to look up.
var ErrConflict = errors.New("order: write refused by the cluster (certification conflict); rolled back")

// rolledBack reports whether err is a deadlock or certification failure,
// after which the server rolled the whole transaction back.
func rolledBack(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213
}

// fenceOut changes column of the row with the id in table and changes it
// back, in tx, for a look-up after a COMMIT of unknown outcome. On Galera a
// locking read locks the row on its own node only: when HAProxy has moved
// the writes since (a node desynced, killed, or back), the transaction
// looked for may sit on the old node with its COMMIT still in flight, and
// land there after this read found it absent. Galera certifies on the keys
// of changed rows, so this write makes the two transactions conflict if
// that one wrote the same row, and the later one is refused: once this one
// commits, the other cannot, and what was found absent stays absent; if the
// other commits first, this one gets 1213 and its retry sees what it wrote.
// A no-op update changes no row, hence the round trip. SQLite has one
// writer and no nodes.
func fenceOut(tx *gorm.DB, d dialect, table, column string, id any) error {
	if !d.fenceOut {
		return nil
	}
	for _, step := range []string{"+ 1", "- 1"} {
		q := "UPDATE " + table + d.primaryKeyOnly + " SET " + column + " = " + column + " " + step + " WHERE id = ?"
		if err := tx.Exec(q, id).Error; err != nil {
			return fmt.Errorf("order: fence out a COMMIT in flight on %s %v: %w", table, id, err)
		}
	}
	return nil
}
