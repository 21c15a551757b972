package order

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// A group commit inserts a few dozen rows into three tables in each
// transaction, and gorm spends more of the service's CPU building such a
// statement than the driver spends sending it: Create walks every field of
// every row by reflection, and even Exec takes each value through its own
// placeholder expansion, two allocations a value (loadtest/RESULTS.md, the
// group commit's inserts). These inserts name their columns, list each
// row's values in plain Go and send the statement on the transaction's
// connection as it is: the driver interpolates the values. gorm's
// callbacks do not see them (tests hook the COMMIT or the claim instead).
// The tests hold each column list to gorm's schema of its row
// (rowinsert_test.go), so the rows read back by gorm stay the rows written.

// rowInsert is a multi-row INSERT into one table.
type rowInsert struct {
	table   string
	columns []string
	// skipDuplicates skips the rows a unique key keeps out instead of
	// failing the statement; they are not counted as affected.
	skipDuplicates bool
}

var (
	orderInsert = rowInsert{table: "orders", skipDuplicates: true, columns: []string{
		"id", "activity_id", "user_id", "status", "idempotency_key", "fence", "created_at", "pay_by", "paid_at",
		"status_fence", "price_minor", "currency", "refund_reason", "event_sequence", "quantity"}}
	eventInsert = rowInsert{table: "order_events", columns: []string{
		"id", "aggregatetype", "aggregateid", "type", "payload", "sequence", "activity_id", "created_at",
		"lease_owner", "lease_until", "sent_at", "batch"}}
	batchInsert = rowInsert{table: "order_event_batches", columns: []string{
		"id", "events", "created_at", "lease_owner", "lease_until", "sent_at"}}
)

// values appends r's values in orderInsert's column order.
func (r *orderRow) values(dst []any) []any {
	return append(dst, r.ID, r.ActivityID, r.UserID, r.Status, r.IdempotencyKey, r.Fence, r.CreatedAt, r.PayBy, r.PaidAt,
		r.StatusFence, r.PriceMinor, r.Currency, r.RefundReason, r.EventSequence, r.Quantity)
}

// values appends r's values in eventInsert's column order.
func (r *eventRow) values(dst []any) []any {
	return append(dst, r.ID, r.Aggregatetype, r.Aggregateid, r.Type, r.Payload, r.Sequence, r.ActivityID, r.CreatedAt,
		r.LeaseOwner, r.LeaseUntil, r.SentAt, r.Batch)
}

// values appends r's values in batchInsert's column order.
func (r *batchRow) values(dst []any) []any {
	return append(dst, r.ID, r.Events, r.CreatedAt, r.LeaseOwner, r.LeaseUntil, r.SentAt)
}

// valuer is a row that lists its values in its insert's column order.
type valuer interface{ values(dst []any) []any }

// insertRows inserts rows in one statement of tx and returns how many it
// inserted.
func insertRows[R any, P interface {
	*R
	valuer
}](tx *gorm.DB, d dialect, in rowInsert, rows []R) (int64, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	args := make([]any, 0, len(rows)*len(in.columns))
	for i := range rows {
		args = P(&rows[i]).values(args)
	}
	res, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, in.sql(d, len(rows)), args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// sql is the statement for n rows in dialect d.
func (in rowInsert) sql(d dialect, n int) string {
	var b strings.Builder
	row := "(?" + strings.Repeat(",?", len(in.columns)-1) + ")"
	b.Grow(64 + 16*len(in.columns) + n*(len(row)+1))
	b.WriteString("INSERT INTO `")
	b.WriteString(in.table)
	b.WriteString("` (`")
	b.WriteString(strings.Join(in.columns, "`,`"))
	b.WriteString("`) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	if in.skipDuplicates {
		b.WriteString(d.skipDuplicates)
	}
	return b.String()
}
