package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// activityState is an activity's books at the end.
type activityState struct {
	// Books: the last look, the one at which they balanced if they did.
	// One query reads its database side, so its sold count and the units
	// its orders hold are of one moment whatever expiries run.
	Books seckill.Books
	// Balanced: the time from the faults' end to the first look at which
	// Redis's remaining stock plus the orders holding a unit equalled the
	// total; negative when it never did within the bound.
	Balanced time.Duration
}

// balanceChecks are the checks of the books that Redis takes part in: the
// books balance at a look that fails none of them.
var balanceChecks = []string{seckill.CheckImbalance, seckill.CheckRedisMissing, seckill.CheckRedisNegative}

// booksInvariants is the invariant each check of the books (seckill.Books)
// stands for. A user with two orders is not here: the buyer check reports
// each such buyer with the rows.
var booksInvariants = map[string]string{
	seckill.CheckOversold:      InvNoOversell,
	seckill.CheckSold:          InvExpiryOneUnit,
	seckill.CheckImbalance:     InvBooksBalance,
	seckill.CheckRedisMissing:  InvBooksBalance,
	seckill.CheckRedisNegative: InvBooksBalance,
}

// balanced reports whether the books fail none of the checks Redis takes
// part in.
func balanced(b seckill.Books) bool {
	return !slices.ContainsFunc(b.Violations(), func(v seckill.Violation) bool { return slices.Contains(balanceChecks, v.Check) })
}

// finalState waits up to BalanceBound from healed for each activity's books
// to balance (Redis remaining + orders holding a unit == total), with no
// command, then reads every order.
func (c *cluster) finalState(ctx context.Context, acts []int64, healed time.Time, db *sql.DB, stocks *stock.Store) (finalState, error) {
	var st finalState
	orders, err := reread(ctx, func(ctx context.Context) (*order.Store, error) {
		return order.Open(ctx, c.db.dsn, order.Options{SkipMigrations: true})
	})
	if err != nil {
		return st, fmt.Errorf("chaos: the books: %w", err)
	}
	defer func() { _ = orders.Close() }()
	for _, id := range acts {
		a := activityState{Balanced: -1}
		for {
			books, err := reread(ctx, func(ctx context.Context) ([]seckill.Books, error) { return orders.Activities.Books(ctx, id) })
			if err == nil && len(books) != 1 {
				err = fmt.Errorf("activity %d: %d books", id, len(books))
			}
			if err != nil {
				return st, fmt.Errorf("chaos: the books: %w", err)
			}
			if err := stocks.FillBooks(ctx, books); err != nil {
				books[0].RedisLoaded = false // Redis not answering: no stock seen
			}
			a.Books = books[0]
			if balanced(a.Books) {
				a.Balanced = time.Since(healed)
				break
			}
			if time.Since(healed) > BalanceBound {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		st.activities = append(st.activities, a)
	}
	st.readAt = time.Now()
	st.orders, err = readOrders(ctx, db)
	return st, err
}

// readOrders reads every order, trying again on a failed read (reread).
func readOrders(ctx context.Context, db *sql.DB) ([]orderRow, error) {
	return reread(ctx, func(ctx context.Context) ([]orderRow, error) { return readOrdersOnce(ctx, db) })
}

// readOrdersOnce reads every order. An order's units are its quantity, 1 in
// a database from before quantities (docs/API.md "Quantity per buyer").
func readOrdersOnce(ctx context.Context, db *sql.DB) ([]orderRow, error) {
	units := "1"
	var col string
	switch err := db.QueryRowContext(ctx, "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'orders' AND column_name = 'quantity'").Scan(&col); {
	case err == nil:
		units = "quantity"
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("chaos: read orders: %w", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT id, activity_id, user_id, status, created_at, event_sequence, "+units+" FROM orders")
	if err != nil {
		return nil, fmt.Errorf("chaos: read orders: %w", err)
	}
	defer rows.Close()
	var out []orderRow
	for rows.Next() {
		var r orderRow
		if err := rows.Scan(&r.ID, &r.Activity, &r.User, &r.Status, &r.Created, &r.Events, &r.Units); err != nil {
			return nil, fmt.Errorf("chaos: read orders: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chaos: read orders: %w", err)
	}
	return out, nil
}

// checkUnits counts, from the final order rows, the units each activity's
// orders hold (created and paid: an order of k holds k), which may not pass
// its total: the books' own count (seckill.Books) read beside, by the
// checker.
func checkUnits(st finalState) []matched {
	held := map[int64]int64{}
	for _, r := range st.orders {
		if r.Status == "created" || r.Status == "paid" {
			held[r.Activity] += r.Units
		}
	}
	var out []matched
	for _, a := range st.activities {
		act, total := a.Books.ActivityID, a.Books.TotalStock
		if held[act] > total {
			out = append(out, matched{InvNoOversell, fmt.Sprintf("activity %d: its created and paid orders hold %d units of %d", act, held[act], total),
				func(o Op) bool { return o.Activity == act && o.Status == 201 }})
		}
	}
	return out
}
