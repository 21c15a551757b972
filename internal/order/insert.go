package order

import (
	"strings"

	"gorm.io/gorm"
)

// The group commit's two multi-row inserts, built by hand: gorm's Create
// walks every field of every row by reflection, which cost the service about
// as much CPU as the rest of the group's transaction (the profiles in
// loadtest/RESULTS.md). database/sql turns the pointer fields into NULL or
// their value, as Create did.

// orderColumns are orders' columns in the order orderArgs gives them.
const orderColumns = "id, activity_id, user_id, status, idempotency_key, fence, created_at, pay_by, paid_at, status_fence, " +
	"price_minor, currency, refund_reason, event_sequence, quantity"

func orderArgs(args []any, r *orderRow) []any {
	return append(args, r.ID, r.ActivityID, r.UserID, r.Status, r.IdempotencyKey, r.Fence, r.CreatedAt, r.PayBy, r.PaidAt,
		r.StatusFence, r.PriceMinor, r.Currency, r.RefundReason, r.EventSequence, r.Quantity)
}

// eventColumns are order_events' columns in the order eventArgs gives them.
const eventColumns = "id, aggregatetype, aggregateid, type, payload, sequence, activity_id, created_at, lease_owner, lease_until, sent_at"

func eventArgs(args []any, r *eventRow) []any {
	return append(args, r.ID, r.Aggregatetype, r.Aggregateid, r.Type, r.Payload, r.Sequence, r.ActivityID, r.CreatedAt,
		r.LeaseOwner, r.LeaseUntil, r.SentAt)
}

// insertRows inserts n rows of the columns into table in one statement;
// with skipTaken a row whose unique key is taken is skipped, not an error
// (RowsAffected then counts the rows inserted).
func insertRows(tx *gorm.DB, table, columns string, n int, args []any, skipTaken bool) *gorm.DB {
	width := strings.Count(columns, ",") + 1
	var q strings.Builder
	q.Grow(len(table) + len(columns) + n*(2*width+3) + 64)
	q.WriteString("INSERT INTO ")
	q.WriteString(table)
	q.WriteString(" (")
	q.WriteString(columns)
	q.WriteString(") VALUES ")
	row := "(" + strings.Repeat("?,", width-1) + "?)"
	for i := range n {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
	}
	if skipTaken {
		if tx.Dialector.Name() == "sqlite" {
			q.WriteString(" ON CONFLICT DO NOTHING")
		} else {
			q.WriteString(" ON DUPLICATE KEY UPDATE id = id")
		}
	}
	return tx.Exec(q.String(), args...)
}
