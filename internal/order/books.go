package order

import (
	"context"
	"fmt"

	"github.com/seckill-oss/seckill"
)

// booksQuery reads the database side of activities' books in one round
// trip: each buyer's rows first (so that a buyer with two counts once as a
// duplicate), then per activity. %s are the filters on the ids, or nothing.
const booksQuery = `SELECT a.id AS activity_id, a.total_stock AS total_stock, a.sold AS sold,
	COALESCE(SUM(u.n), 0) AS order_rows, COALESCE(SUM(u.held), 0) AS held,
	COALESCE(SUM(u.paid), 0) AS paid, COALESCE(SUM(u.expired), 0) AS expired,
	COALESCE(SUM(CASE WHEN u.n > 1 THEN 1 ELSE 0 END), 0) AS duplicate_users
FROM activities a LEFT JOIN (
	SELECT activity_id, COUNT(*) AS n,
		SUM(CASE WHEN status IN ? THEN quantity ELSE 0 END) AS held,
		SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS paid,
		SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS expired
	FROM orders %s GROUP BY activity_id, user_id) u ON u.activity_id = a.id
%s GROUP BY a.id, a.total_stock, a.sold ORDER BY a.id`

// heldStatuses are the statuses whose orders hold a unit (seckill.HoldsUnit).
var heldStatuses = []string{seckill.OrderStatusCreated, seckill.OrderStatusPaid}

// Books returns the database side of the books of the activities with the
// ids (of all activities when none is given), in id order, in one query: an
// id that names no activity has no entry. Redis's side (RedisRemaining,
// RedisLoaded) is left for the stock store to fill in. It is a causal read
// (causal.go): the books are judged on it.
func (s *Activities) Books(ctx context.Context, ids ...int64) ([]seckill.Books, error) {
	args := []any{heldStatuses, seckill.OrderStatusPaid, seckill.OrderStatusExpired}
	q := fmt.Sprintf(booksQuery, "", "")
	if len(ids) > 0 {
		q = fmt.Sprintf(booksQuery, "WHERE activity_id IN ?", "WHERE a.id IN ?")
		args = append(args, ids, ids)
	}
	var rows []struct {
		ActivityID, TotalStock, Sold, OrderRows, Held, Paid, Expired, DuplicateUsers int64
	}
	if err := s.db.WithContext(ctx).Raw(s.dialect.causal(q), args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("order: books of activities %v: %w", ids, err)
	}
	books := make([]seckill.Books, len(rows))
	for i, r := range rows {
		books[i] = seckill.Books{
			ActivityID: r.ActivityID, TotalStock: r.TotalStock, Sold: r.Sold, Held: r.Held,
			Rows: r.OrderRows, Paid: r.Paid, Expired: r.Expired, DuplicateUsers: r.DuplicateUsers,
		}
	}
	return books, nil
}
