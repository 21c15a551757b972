package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/seckill-oss/seckill"
)

// claimUnits takes k units of the activity for a lock grant's batch; it
// changes no row when the activity is missing, has fewer than k units left,
// or was already written by this or a newer grant.
const claimUnits = `UPDATE activities SET sold = sold + ?, fence = ?
WHERE id = ? AND fence < ? AND sold + ? <= total_stock`

// unclaimUnits gives back, in the same transaction, the units of orders that
// a unique key kept out.
const unclaimUnits = `UPDATE activities SET sold = sold - ? WHERE id = ?`

// Batch is what CreateOrders did with each order of a batch.
type Batch struct {
	// Written are the orders stored, as stored.
	Written []seckill.Order
	// Taken are the orders a unique key kept out: the user already holds an
	// order for the activity, or already used the idempotency key. Look up
	// which (OrderByUser, OrderByIdempotencyKey) to answer them.
	Taken []seckill.Order
	// Over are the orders for which the database had no unit left: it
	// already holds total_stock orders, whatever Redis said.
	Over []seckill.Order
}

// CreateOrders writes a lock grant's batch of orders for one activity in one
// transaction: one fenced claim of the batch's units (the grant's fence must
// be newer than every grant that wrote before, and the units must not
// exceed the total), one multi-row insert, and the units of orders a unique
// key kept out given back. Orders are filled in as by CreateOrder, and all
// carry fence and the activity's price as the claim found it.
//
// With fewer units left than orders, the first ones get them and the rest
// are Over. A batch that writes no order changes nothing. Errors: ErrActivityNotFound, ErrStaleFence (an order was written
// under fence or a newer one); with these or any other error nothing was
// written, except ErrCommitUnknown: COMMIT failed, and the orders may exist;
// Written (with a locking read) tells.
func (s *Store) CreateOrders(ctx context.Context, activityID, fence int64, orders []seckill.Order) (Batch, error) {
	rows := make([]orderRow, len(orders))
	for i, o := range orders {
		o.ActivityID, o.Fence = activityID, fence
		filled, err := fill(o)
		if err != nil {
			return Batch{}, err
		}
		rows[i] = s.newOrderRow(filled)
	}
	if len(rows) == 0 {
		return Batch{}, nil
	}

	tx := s.db.WithContext(ctx).Begin()
	if tx.Error != nil {
		return Batch{}, fmt.Errorf("order: create %d orders in activity %d: begin: %w", len(rows), activityID, tx.Error)
	}
	// After a successful Commit this is a no-op; on every other path it undoes
	// the claimed units, also if something below panics.
	defer tx.Rollback()

	b, err := writeBatch(tx, activityID, fence, rows)
	if err != nil {
		return Batch{}, fmt.Errorf("order: create %d orders in activity %d: %w", len(rows), activityID, err)
	}
	if len(b.Written) == 0 {
		// Nothing to keep, not even the fence claim: a batch that wrote no
		// order changes nothing (the deferred Rollback).
		return b, nil
	}
	if err := commit(tx); err != nil {
		return Batch{}, fmt.Errorf("order: create %d orders in activity %d: %w", len(orders), activityID, err)
	}
	return b, nil
}

// writeBatch claims units for rows under fence in tx and inserts the rows
// that got one, skipping those a unique key keeps out.
func writeBatch(tx *gorm.DB, activityID, fence int64, rows []orderRow) (Batch, error) {
	var b Batch
	claimed, err := claimBatch(tx, activityID, fence, int64(len(rows)))
	if err != nil {
		return Batch{}, err
	}
	for _, r := range rows[claimed:] {
		b.Over = append(b.Over, r.order())
	}
	rows = rows[:claimed]
	if len(rows) == 0 {
		return b, nil
	}
	if err := priceOrders(tx, activityID, rows); err != nil {
		return Batch{}, err
	}
	written, err := insertIgnoringTaken(tx, activityID, rows)
	if err != nil {
		return Batch{}, err
	}
	for _, r := range rows {
		if written[r.ID] {
			b.Written = append(b.Written, r.order())
		} else {
			b.Taken = append(b.Taken, r.order())
		}
	}
	return b, nil
}

// commit commits tx within its context, the caller's lease. database/sql's
// Tx.Commit takes no context and the MySQL driver watches none during it, so
// a COMMIT on a stalled link would hold its caller for the DSN's
// readTimeout, five leases. Sent as a statement, COMMIT runs under the
// driver's context watcher, which closes the connection when the lease ends;
// the caller then has ErrCommitUnknown and resolves it with the locking read
// (Written, OrderLocked). Tx.Commit then only ends database/sql's side (a
// second COMMIT, a no-op on the server). SQLite's transactions are local and
// need no bound, and its driver refuses a COMMIT it did not send.
//
// A COMMIT the cluster refused (a certification conflict on Galera, 1213) is
// a rollback, not an unknown outcome: it returns ErrConflict.
func commit(tx *gorm.DB) error {
	if tx.Dialector.Name() != "sqlite" {
		if err := tx.Exec("COMMIT").Error; err != nil {
			if rolledBack(err) {
				return fmt.Errorf("%w: %w", ErrConflict, err)
			}
			return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
		}
	}
	if err := tx.Commit().Error; err != nil {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return nil
}

// claimBatch claims up to k units for the grant and returns how many: k, or
// what the activity has left when that is fewer.
func claimBatch(tx *gorm.DB, activityID, fence, k int64) (int64, error) {
	res := tx.Exec(claimUnits, k, fence, activityID, fence, k)
	if res.Error != nil {
		return 0, fmt.Errorf("claim %d units: %w", k, res.Error)
	}
	if res.RowsAffected == 1 {
		return k, nil
	}
	// Refused: read the row under lock to learn why, and take what is left
	// when that is the reason.
	var a activityRow
	err := tx.Clauses(lockingRead(tx)...).Select("fence", "sold", "total_stock").Take(&a, activityID).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return 0, ErrActivityNotFound
	case err != nil:
		return 0, fmt.Errorf("read activity after a refused claim: %w", err)
	case a.Fence >= fence:
		return 0, fmt.Errorf("%w: fence %d, activity written under %d", ErrStaleFence, fence, a.Fence)
	case a.Sold >= a.TotalStock:
		return 0, nil
	}
	left := min(k, a.TotalStock-a.Sold)
	res = tx.Exec(claimUnits, left, fence, activityID, fence, left)
	switch {
	case res.Error != nil:
		return 0, fmt.Errorf("claim %d units: %w", left, res.Error)
	case res.RowsAffected != 1:
		return 0, fmt.Errorf("claim of %d units refused under a row lock: fence %d, sold %d of %d", left, a.Fence, a.Sold, a.TotalStock)
	}
	return left, nil
}

// insertIgnoringTaken inserts rows in one statement, skipping those a unique
// key (user per activity, idempotency key per user) keeps out, gives their
// claimed units back, and returns the ids written.
func insertIgnoringTaken(tx *gorm.DB, activityID int64, rows []orderRow) (map[string]bool, error) {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows)
	if res.Error != nil {
		return nil, fmt.Errorf("insert: %w", res.Error)
	}
	written := make(map[string]bool, len(rows))
	if res.RowsAffected == int64(len(rows)) {
		for _, r := range rows {
			written[r.ID] = true
		}
		return written, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var found []string
	if err := tx.Model(&orderRow{}).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
		return nil, fmt.Errorf("find the orders written: %w", err)
	}
	for _, id := range found {
		written[id] = true
	}
	if taken := len(rows) - len(found); taken > 0 {
		if err := tx.Exec(unclaimUnits, taken, activityID).Error; err != nil {
			return nil, fmt.Errorf("give back %d units: %w", taken, err)
		}
	}
	return written, nil
}

// Written returns, of the orders with the given ids, those stored, by id.
// It is the look-up after ErrCommitUnknown, and it is a locking read: it
// first locks the activity's row, which a batch's transaction holds from its
// claim to its end, so a COMMIT still in flight on a dead connection is
// waited for (until ctx ends) rather than missed by a plain read that would
// declare its orders absent and let their units be sold twice.
func (s *Store) Written(ctx context.Context, activityID int64, ids []string) (map[string]seckill.Order, error) {
	got := make(map[string]seckill.Order, len(ids))
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var a activityRow
		if err := lockActivity(tx, activityID, "id", &a); err != nil {
			return err
		}
		var rows []orderRow
		if err := tx.Where("id IN ?", ids).Find(&rows).Error; err != nil {
			return fmt.Errorf("order: read %d orders of activity %d: %w", len(ids), activityID, err)
		}
		for _, r := range rows {
			got[r.ID] = r.order()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// lockingRead is FOR UPDATE where the dialect has it. SQLite has one writer
// at a time: a transaction that began (IMMEDIATE) holds the write lock, so
// its plain reads already wait for any other writer.
func lockingRead(tx *gorm.DB) []clause.Expression {
	if tx.Dialector.Name() == "sqlite" {
		return nil
	}
	return []clause.Expression{clause.Locking{Strength: clause.LockingStrengthUpdate}}
}
