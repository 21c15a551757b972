package order

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// Batch is what CreateOrders did with each order of a batch.
type Batch struct {
	// Written are the orders stored, as stored.
	Written []seckill.Order
	// KeptOut are the orders a unique key kept out: the user already holds an
	// order for the activity, or already used the idempotency key. Look up
	// which (OrderByUser, OrderByIdempotencyKey) to answer them.
	KeptOut []seckill.Order
	// Over are the orders for which the database had too few units left:
	// its orders already hold (nearly) total_stock units, whatever Redis said.
	Over []seckill.Order
	// Left is the units the database had left for the activity after the
	// claim (before the units of KeptOut went back): fewer than each order of
	// Over holds, but not always none.
	Left int64
}

// CreateOrders writes a lock grant's batch of orders for one activity in one
// transaction, as a group of one (CreateOrderGroup) that waits for its
// activity's row within ctx: the grant's fence must
// be newer than every grant that wrote before, the units must not exceed the
// total, and orders a unique key keeps out take no unit. An order's empty
// ID gets a new UUIDv7, a zero CreatedAt the current time, an empty Status
// seckill.OrderStatusCreated; an empty IdempotencyKey is stored as none. All
// carry fence and the activity's price as the claim found it.
//
// Units, not orders, are claimed: an order takes all its units or none.
// With fewer units left than the orders hold, each order in turn gets its
// units while they last and those that do not fit are Over. A batch that writes no order changes nothing. Errors:
// ErrActivityNotFound, ErrStaleFence (an order was written under fence or a
// newer one); with these or any other error nothing was written, except
// ErrCommitUnknown: COMMIT failed, and the orders may exist; Written (with a
// locking read) tells.
func (s *Orders) CreateOrders(ctx context.Context, activityID, fence int64, orders []seckill.Order) (Batch, error) {
	r := s.createGroup(ctx, []Write{{ActivityID: activityID, Fence: fence, Orders: orders}}, false)
	return r[0].Batch, r[0].Err
}

// Written returns, of the orders with the given ids, those stored, by id.
// It is the look-up after ErrCommitUnknown, and it is a locking read: it
// first locks the activity's row, which a batch's transaction holds from its
// claim to its end, so a COMMIT still in flight on a dead connection is
// waited for (until ctx ends) rather than missed by a plain read that would
// declare its orders absent and let their units be sold twice. On Galera it
// also writes the row (fenceOut), so that a COMMIT in flight on another node
// cannot land after it. left is the units the database has left for the
// activity, under the same lock.
func (s *Orders) Written(ctx context.Context, activityID int64, ids []string) (got map[string]seckill.Order, left int64, err error) {
	got = make(map[string]seckill.Order, len(ids))
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var a activityRow
		if err := lockActivity(tx, s.dialect, activityID, "id, total_stock, sold", &a); err != nil {
			return err
		}
		left = max(a.TotalStock-a.Sold, 0)
		// Every batch writes the activity's row (its claim).
		if err := fenceOut(tx, s.dialect, "activities", "fence", activityID); err != nil {
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
		return nil, 0, err
	}
	return got, left, nil
}
