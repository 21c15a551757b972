package order

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/seckill-oss/seckill"
)

// A group is several lock grants' batches, each of its own activity, written
// in one transaction: one locking read of their activities, one claim, one
// insert and one COMMIT for all of them, where a transaction each would cost
// all of that per activity. A sale of many items makes batches of one or two
// buyers per activity, so this is most of what a purchase costs the database
// (issue 21).
//
// Sharing the transaction shares nothing else. Each grant's fence is checked
// against its own activity's row, read under lock: a grant refused (a stale
// fence, a missing activity, no unit left) claims nothing and writes
// nothing of its activity, and the others are written as if it were not
// there. A failure of the transaction itself (a lost connection, a COMMIT of
// unknown outcome, a certification conflict) is every grant's.

// Write is one lock grant's batch of orders for one activity.
type Write struct {
	ActivityID int64
	Fence      int64
	Orders     []seckill.Order
}

// WriteResult is what CreateOrderGroup did with one Write, as CreateOrders
// would report it alone.
type WriteResult struct {
	Batch Batch
	Err   error
}

// maxGroupRows caps the order rows of one group, so that its insert stays
// well under the placeholders a statement may carry (65,535 in MySQL,
// 32,766 in SQLite) at 13 columns a row.
const maxGroupRows = 2048

// CreateOrderGroup writes the writes, at most one per activity, in one
// transaction, and returns what became of each, by index, with the errors
// CreateOrders documents. A write refused on its own (ErrActivityNotFound,
// ErrStaleFence, a malformed order) changes nothing; a failure of the
// transaction is every write's, and only ErrCommitUnknown leaves their
// orders possibly written.
func (s *Store) CreateOrderGroup(ctx context.Context, writes []Write) []WriteResult {
	res := make([]WriteResult, len(writes))
	parts := make([]*part, 0, len(writes))
	seen := make(map[int64]bool, len(writes))
	for i, w := range writes {
		if seen[w.ActivityID] {
			res[i].Err = createErr(len(w.Orders), w.ActivityID, errTwiceInGroup)
			continue
		}
		seen[w.ActivityID] = true
		p, err := s.newPart(i, w)
		switch {
		case err != nil:
			res[i].Err = createErr(len(w.Orders), w.ActivityID, err)
		case len(p.rows) > 0:
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return res
	}
	err := writeGroup(s.db.WithContext(ctx), parts)
	for _, p := range parts {
		n := len(writes[p.index].Orders)
		switch {
		case p.err != nil:
			res[p.index].Err = createErr(n, p.activityID, p.err)
		case err != nil:
			res[p.index].Err = createErr(n, p.activityID, err)
		default:
			res[p.index].Batch = p.batch
		}
	}
	return res
}

// errTwiceInGroup: a group may hold one write per activity.
var errTwiceInGroup = errors.New("the activity is in the group twice")

// createErr is err as a write of n orders in the activity reports it.
func createErr(n int, activityID int64, err error) error {
	return fmt.Errorf("order: create %d orders in activity %d: %w", n, activityID, err)
}

// part is one write of a group, and what the group's transaction did with it.
type part struct {
	index      int
	activityID int64
	fence      int64
	rows       []orderRow
	// claimed is how many of rows got a unit, the first ones; oldFence is the
	// activity's fence before the claim.
	claimed  int64
	oldFence int64
	batch    Batch
	err      error // the write's own refusal
}

func (s *Store) newPart(index int, w Write) (*part, error) {
	p := &part{index: index, activityID: w.ActivityID, fence: w.Fence, rows: make([]orderRow, len(w.Orders))}
	for i, o := range w.Orders {
		o.ActivityID, o.Fence = w.ActivityID, w.Fence
		filled, err := fill(o)
		if err != nil {
			return nil, err
		}
		p.rows[i] = s.newOrderRow(filled)
	}
	return p, nil
}

// writeGroup claims, inserts and commits the parts' orders in one
// transaction. A group that writes no order changes nothing, not even a
// fence (the deferred Rollback).
func writeGroup(db *gorm.DB, parts []*part) error {
	tx := db.Begin()
	if tx.Error != nil {
		return fmt.Errorf("begin: %w", tx.Error)
	}
	// After a successful Commit this is a no-op; on every other path it undoes
	// the claimed units, also if something below panics.
	defer tx.Rollback()

	if err := claimGroup(tx, parts); err != nil {
		return err
	}
	claimed := slices.DeleteFunc(slices.Clone(parts), func(p *part) bool { return p.claimed == 0 })
	if len(claimed) == 0 {
		return nil
	}
	written, err := insertGroup(tx, claimed)
	if err != nil {
		return err
	}
	if written == 0 {
		return nil
	}
	return commit(tx)
}

// claimGroup reads the parts' activities under lock, in id order (two groups
// on two instances then lock shared activities in the same order, and cannot
// deadlock on them), decides what each part may claim, claims it in one
// statement, and prices the rows that got a unit. Parts whose grant the
// database refuses get their err and claim nothing.
func claimGroup(tx *gorm.DB, parts []*part) error {
	ids := make([]int64, len(parts))
	for i, p := range parts {
		ids[i] = p.activityID
	}
	slices.Sort(ids)
	var rows []activityRow
	q := "SELECT id, fence, sold, total_stock, price_minor, currency FROM activities" + primaryKeyOnly(tx) +
		" WHERE id IN ? ORDER BY id" + forUpdate(tx)
	if err := tx.Raw(q, ids).Scan(&rows).Error; err != nil {
		return fmt.Errorf("lock the activities: %w", err)
	}
	byID := make(map[int64]activityRow, len(rows))
	for _, a := range rows {
		byID[a.ID] = a
	}
	var set, where strings.Builder
	var soldArgs, fenceArgs, whereArgs []any
	var claiming []int64
	for _, p := range parts {
		a, ok := byID[p.activityID]
		switch {
		case !ok:
			p.err = ErrActivityNotFound
			continue
		case a.Fence >= p.fence:
			p.err = fmt.Errorf("%w: fence %d, activity written under %d", ErrStaleFence, p.fence, a.Fence)
			continue
		}
		p.oldFence = a.Fence
		p.claimed = min(int64(len(p.rows)), max(a.TotalStock-a.Sold, 0))
		for _, r := range p.rows[p.claimed:] {
			p.batch.Over = append(p.batch.Over, r.order())
		}
		p.rows = p.rows[:p.claimed]
		if p.claimed == 0 {
			continue
		}
		for i := range p.rows {
			p.rows[i].PriceMinor, p.rows[i].Currency = a.PriceMinor, a.Currency
		}
		if len(claiming) > 0 {
			where.WriteString(" OR ")
		}
		set.WriteString(" WHEN ? THEN ?")
		soldArgs = append(soldArgs, p.activityID, p.claimed)
		fenceArgs = append(fenceArgs, p.activityID, p.fence)
		where.WriteString("(id = ? AND fence < ? AND sold + ? <= total_stock)")
		claiming = append(claiming, p.activityID)
		whereArgs = append(whereArgs, p.activityID, p.fence, p.claimed)
	}
	n := len(claiming)
	if n == 0 {
		return nil
	}
	// One statement claims for every part; its guards repeat what the locking
	// read decided, so it can only fail to match a row under a bug.
	cases := set.String()
	q = "UPDATE activities" + primaryKeyOnly(tx) + " SET sold = sold + CASE id" + cases + " END, fence = CASE id" + cases +
		" END WHERE id IN ? AND (" + where.String() + ")"
	res := tx.Exec(q, slices.Concat(soldArgs, fenceArgs, []any{claiming}, whereArgs)...)
	switch {
	case res.Error != nil:
		return fmt.Errorf("claim the units of %d activities: %w", n, res.Error)
	case res.RowsAffected != int64(n):
		return fmt.Errorf("claim of the units of %d activities refused under their row locks (%d claimed)", n, res.RowsAffected)
	}
	return nil
}

// insertGroup inserts the parts' claimed rows in one statement, skipping
// those a unique key (user per activity, idempotency key per user) keeps
// out, gives each part's kept-out units back, fills in each part's Written
// and Taken, and returns how many orders were written.
func insertGroup(tx *gorm.DB, parts []*part) (int, error) {
	var all []orderRow
	for _, p := range parts {
		all = append(all, p.rows...)
	}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&all)
	if res.Error != nil {
		return 0, fmt.Errorf("insert %d orders: %w", len(all), res.Error)
	}
	if res.RowsAffected == int64(len(all)) {
		for _, p := range parts {
			for _, r := range p.rows {
				p.batch.Written = append(p.batch.Written, r.order())
			}
		}
		return len(all), nil
	}
	ids := make([]string, len(all))
	for i, r := range all {
		ids[i] = r.ID
	}
	var found []string
	if err := tx.Model(&orderRow{}).Where("id IN ?", ids).Pluck("id", &found).Error; err != nil {
		return 0, fmt.Errorf("find the orders written: %w", err)
	}
	written := make(map[string]bool, len(found))
	for _, id := range found {
		written[id] = true
	}
	for _, p := range parts {
		for _, r := range p.rows {
			if written[r.ID] {
				p.batch.Written = append(p.batch.Written, r.order())
			} else {
				p.batch.Taken = append(p.batch.Taken, r.order())
			}
		}
		if err := unclaim(tx, p); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// primaryKeyOnly is the index hint that keeps a statement on a group's
// activities to primary-key look-ups. Without it InnoDB may read a small
// table, or one whose statistics predate its rows (activities created just
// before a sale), with a full scan, and a locking read or UPDATE locks every
// row it reads: other activities' rows too, which other groups, expiries
// and payments then wait for, and two groups deadlock on. SQLite has one
// writer and no row locks.
func primaryKeyOnly(tx *gorm.DB) string {
	if tx.Dialector.Name() == "sqlite" {
		return ""
	}
	return " FORCE INDEX (PRIMARY)"
}

// unclaim gives back the units of p's orders a unique key kept out; when it
// kept all of them out, the activity's fence goes back too, so that a part
// that wrote nothing changed nothing, as a batch written alone.
func unclaim(tx *gorm.DB, p *part) error {
	taken := int64(len(p.batch.Taken))
	if taken == 0 {
		return nil
	}
	fence := p.fence
	if len(p.batch.Written) == 0 {
		fence = p.oldFence
	}
	err := tx.Exec(`UPDATE activities SET sold = sold - ?, fence = ? WHERE id = ?`, taken, fence, p.activityID).Error
	if err != nil {
		return fmt.Errorf("give back %d units of activity %d: %w", taken, p.activityID, err)
	}
	return nil
}
