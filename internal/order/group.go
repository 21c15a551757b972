package order

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// A group is several lock grants' batches, each of its own activity, written
// in one transaction: one locking read of their activities, one claim, one
// insert and one COMMIT for all of them, where a transaction each would cost
// all of that per activity. A sale of many items makes batches of one or two
// buyers per activity, so this is most of what a purchase costs the database.
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
	// Lease, when set, is the grant's lease: a write whose lease has ended by
	// the time its row is locked claims nothing and gets the lease's cause.
	// A lease that ends later does not stop the group: the fence, checked
	// under the row lock, is what keeps a late write from selling twice.
	Lease context.Context
}

// ErrRowBusy: another transaction held the activity's row when a group was to
// lock it; the write claimed and wrote nothing. Write it alone (CreateOrders),
// which waits for the row within its own context.
var ErrRowBusy = errors.New("order: the activity's row is held by another transaction")

// WriteResult is what CreateOrderGroup did with one Write, as CreateOrders
// would report it alone.
type WriteResult struct {
	Batch Batch
	Err   error
}

// maxGroupRows caps the order rows of one group, so that its insert stays
// well under the placeholders a statement may carry (65,535 in MySQL,
// 32,766 in SQLite) at 15 columns a row (orderInsert).
const maxGroupRows = 2048

// CreateOrderGroup writes the writes, at most one per activity, in one
// transaction, and returns what became of each, by index, with the errors
// CreateOrders documents and ErrRowBusy. A write refused on its own
// (ErrActivityNotFound, ErrStaleFence, ErrRowBusy, an ended lease, a
// malformed order) changes nothing; a failure of the transaction is every
// write's that wrote something, and only ErrCommitUnknown leaves their orders
// possibly written.
func (s *Orders) CreateOrderGroup(ctx context.Context, writes []Write) []WriteResult {
	return s.createGroup(ctx, writes, true)
}

// createGroup is CreateOrderGroup; a write whose row is busy waits for it
// when skipBusy is false (a write alone).
func (s *Orders) createGroup(ctx context.Context, writes []Write, skipBusy bool) []WriteResult {
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
	err := writeGroup(s.db.WithContext(ctx), s.dialect, parts, skipBusy, s.handoff.Load())
	for _, p := range parts {
		n := len(writes[p.index].Orders)
		switch {
		case p.err != nil:
			res[p.index].Err = createErr(n, p.activityID, p.err)
		case err != nil && (!errors.Is(err, ErrCommitUnknown) || !p.wroteNothing(parts)):
			res[p.index].Err = createErr(n, p.activityID, err)
		default:
			res[p.index].Batch = p.batch
		}
	}
	return res
}

// wroteNothing reports whether p, whose rows were all claimed or refused and
// inserted or kept out before the group's COMMIT, wrote no order in a way
// that holds whether that COMMIT landed or not. Every row over the total
// found the total in the row it locked, and every row a unique key kept out
// met an order committed before, unless the key it met is a sibling's row of
// this very transaction: a buyer's idempotency key reused in another
// activity of the group, which exists only if the COMMIT landed.
func (p *part) wroteNothing(parts []*part) bool {
	if len(p.batch.Written) > 0 {
		return false
	}
	for _, t := range p.batch.KeptOut {
		if t.IdempotencyKey == "" {
			continue
		}
		for _, q := range parts {
			for _, w := range q.batch.Written {
				if q != p && w.UserID == t.UserID && w.IdempotencyKey == t.IdempotencyKey {
					return false
				}
			}
		}
	}
	return true
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
	lease      context.Context // nil: none
	rows       []orderRow
	// claimed is the units the rows claimed (rows holds only those that got
	// theirs); oldFence is the activity's fence before the claim.
	claimed  int64
	oldFence int64
	batch    Batch
	err      error // the write's own refusal
}

func (s *Orders) newPart(index int, w Write) (*part, error) {
	p := &part{index: index, activityID: w.ActivityID, fence: w.Fence, lease: w.Lease, rows: make([]orderRow, len(w.Orders))}
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
// fence (it rolls back).
func writeGroup(db *gorm.DB, d dialect, parts []*part, skipBusy bool, h *Handoff) error {
	var events []eventRow
	var batch int64
	err := transaction(db, d, func(tx *gorm.DB) (bool, error) {
		if err := claimGroup(tx, d, parts, skipBusy); err != nil {
			return false, err
		}
		claimed := slices.DeleteFunc(slices.Clone(parts), func(p *part) bool { return p.claimed == 0 })
		if len(claimed) == 0 {
			return false, nil
		}
		written, err := insertGroup(tx, d, claimed)
		if err != nil || written == 0 {
			return false, err
		}
		// Each order written has its created event in the same transaction:
		// one more statement for the whole group.
		var orders []seckill.Order
		for _, p := range claimed {
			orders = append(orders, p.batch.Written...)
		}
		events, batch, err = insertCreatedEvents(tx, d, orders, h)
		return err == nil, err
	})
	if err == nil && len(events) > 0 {
		h.give(batch, events)
	}
	return err
}

// claimGroup reads the parts' activities under lock, in id order (two groups
// on two instances then lock shared activities in the same order, and cannot
// deadlock on them), decides what each part may claim, claims it in one
// statement, and prices the rows that got a unit. Parts whose grant the
// database refuses, whose row is busy (with skipBusy) or whose lease has
// ended get their err and claim nothing.
func claimGroup(tx *gorm.DB, d dialect, parts []*part, skipBusy bool) error {
	byID, err := lockActivities(tx, d, parts, skipBusy)
	if err != nil {
		return err
	}
	var set, where strings.Builder
	var soldArgs, fenceArgs, whereArgs []any
	var claiming []int64
	for _, p := range parts {
		a, ok := byID[p.activityID]
		if !p.decide(a, ok) {
			continue
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
	q := "UPDATE activities" + d.primaryKeyOnly + " SET sold = sold + CASE id" + cases + " END, fence = CASE id" + cases +
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

// decide settles the part against its activity's row as the locking read
// found it (ok false: no such row): an error for a missing, busy or stale
// row or an ended lease; otherwise the units it claims, at most those left,
// the rows beyond them over (sold out), and the activity's price copied
// onto each order. It reports whether the part claims any unit.
func (p *part) decide(a lockedActivity, ok bool) bool {
	switch {
	case !ok:
		p.err = ErrActivityNotFound
		return false
	case a.busy:
		p.err = ErrRowBusy
		return false
	case p.lease != nil && p.lease.Err() != nil:
		p.err = fmt.Errorf("the lease ended before the claim: %w", context.Cause(p.lease))
		return false
	case a.Fence >= p.fence:
		p.err = fmt.Errorf("%w: fence %d, activity written under %d", ErrStaleFence, p.fence, a.Fence)
		return false
	}
	p.oldFence = a.Fence
	// Units, not orders: each row claims all its units or none (over), in
	// the batch's order, so a row that does not fit leaves the units left to
	// a smaller one behind it, as the deduct in Redis did.
	left := max(a.TotalStock-a.Sold, 0)
	kept := p.rows[:0]
	for _, r := range p.rows {
		if r.Quantity > left {
			p.batch.Over = append(p.batch.Over, r.order())
			continue
		}
		left -= r.Quantity
		p.claimed += r.Quantity
		kept = append(kept, r)
	}
	p.rows = kept
	p.batch.Left = left
	for i := range p.rows {
		p.rows[i].PriceMinor, p.rows[i].Currency = a.PriceMinor, a.Currency
	}
	return p.claimed > 0
}

// lockedActivity is an activity's row as a group's locking read found it;
// busy marks an id whose row exists but another transaction held.
type lockedActivity struct {
	activityRow
	busy bool
}

// lockActivities reads the parts' activities under lock, by id. With
// skipBusy, rows another transaction holds are skipped, not waited for; the
// ids missing then are told apart (busy, or no such activity) by a plain
// read, which waits for no lock.
func lockActivities(tx *gorm.DB, d dialect, parts []*part, skipBusy bool) (map[int64]lockedActivity, error) {
	ids := make([]int64, len(parts))
	for i, p := range parts {
		ids[i] = p.activityID
	}
	slices.Sort(ids)
	lockClause := d.forUpdate
	if skipBusy && lockClause != "" {
		lockClause += " SKIP LOCKED"
	}
	var rows []activityRow
	q := "SELECT id, fence, sold, total_stock, price_minor, currency FROM activities" + d.primaryKeyOnly +
		" WHERE id IN ? ORDER BY id" + lockClause
	if err := tx.Raw(q, ids).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("lock the activities: %w", err)
	}
	byID := make(map[int64]lockedActivity, len(ids))
	for _, a := range rows {
		byID[a.ID] = lockedActivity{activityRow: a}
	}
	if len(rows) == len(ids) || !skipBusy {
		return byID, nil
	}
	missing := slices.DeleteFunc(ids, func(id int64) bool { _, ok := byID[id]; return ok })
	var exist []int64
	if err := tx.Raw("SELECT id FROM activities"+d.primaryKeyOnly+" WHERE id IN ?", missing).Scan(&exist).Error; err != nil {
		return nil, fmt.Errorf("tell busy activities from missing ones: %w", err)
	}
	for _, id := range exist {
		byID[id] = lockedActivity{busy: true}
	}
	return byID, nil
}

// insertGroup inserts the parts' claimed rows in one statement, skipping
// those a unique key (user per activity, idempotency key per user) keeps
// out, gives each part's kept-out units back, fills in each part's Written
// and KeptOut, and returns how many orders were written.
func insertGroup(tx *gorm.DB, d dialect, parts []*part) (int, error) {
	var all []orderRow
	for _, p := range parts {
		all = append(all, p.rows...)
	}
	inserted, err := insertRows(tx, d, orderInsert, all)
	if err != nil {
		return 0, fmt.Errorf("insert %d orders: %w", len(all), err)
	}
	if inserted == int64(len(all)) {
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
				p.batch.KeptOut = append(p.batch.KeptOut, r.order())
			}
		}
		if err := unclaim(tx, p); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// unclaim gives back the units of p's orders a unique key kept out; when it
// kept all of them out, the activity's fence goes back too, so that a part
// that wrote nothing changed nothing, as a batch written alone.
func unclaim(tx *gorm.DB, p *part) error {
	var taken int64
	for _, o := range p.batch.KeptOut {
		taken += o.Units()
	}
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
