package stock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
)

// ErrOrderReturned is returned by ReturnOrder when the order's unit went back
// already; nothing changed.
var ErrOrderReturned = errors.New("stock: unit of the order already returned")

// OrderReceiptTTL is how long the receipt of an expired order's return
// lives: far longer than any retry of the return, so a repeat never adds a
// second unit.
const OrderReceiptTTL = 24 * time.Hour

// alreadyReturned is return_order.lua's answer when the receipt exists.
const alreadyReturned = -2

var returnOrderScript = luascript.LoadWithPrelude(luaFiles, "return_order.lua")

// Epoch returns the epoch of the activity's stock (the fence of the grant
// its last load ran under), or ErrNotLoaded.
func (s *Store) Epoch(ctx context.Context, activityID int64) (int64, error) {
	epoch, err := s.rdb.HGet(ctx, s.key(activityID), keys.StockEpoch).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: epoch of activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: epoch of activity %d: %w", activityID, err)
	}
	return epoch, nil
}

// ReturnOrder puts back the units (its quantity, at least 1) of an order
// that expired unpaid, all of them once per order whatever happens: a receipt keyed by the order id makes a repeat, or
// a retry after a lost reply, change nothing (ErrOrderReturned). epoch is the
// stock's epoch read before the order was expired in the database: when the
// stock was loaded again since, ReturnOrder returns ErrStale and changes
// nothing, as that load may have counted the unit as unsold already. With
// the stock not loaded it returns ErrNotLoaded. It returns how many units
// are left.
func (s *Store) ReturnOrder(ctx context.Context, activityID int64, orderID string, units, epoch int64) (remaining int64, err error) {
	if units < 1 {
		return 0, fmt.Errorf("stock: return order %s to activity %d: %d units, want at least 1", orderID, activityID, units)
	}
	ks := []string{s.key(activityID), s.orderReceipt(activityID, orderID)}
	left, err := returnOrderScript.Run(ctx, s.rdb, ks, epoch, OrderReceiptTTL.Milliseconds(), units).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: return order %s to activity %d: %w", orderID, activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: return order %s to activity %d: %w", orderID, activityID, err)
	case left == alreadyReturned:
		return 0, fmt.Errorf("stock: return order %s to activity %d: %w", orderID, activityID, ErrOrderReturned)
	case left == reloaded:
		return 0, fmt.Errorf("stock: return order %s to activity %d, epoch %d: %w", orderID, activityID, epoch, ErrStale)
	}
	return left, nil
}

// orderReceipt is the key of an expired order's return receipt:
// <prefix>seckill:{act:N}:returned:<order id>.
func (s *Store) orderReceipt(activityID int64, orderID string) string {
	return s.space.Activity(activityID, "returned:"+orderID)
}
