package seckill

import "time"

// What the service answers about activities, purchases and the books: the
// shapes the HTTP edge renders, kept here so that it needs no service
// package.

// BuyRequest is one buyer's attempt to buy Quantity units of an activity.
type BuyRequest struct {
	ActivityID int64
	UserID     int64
	// IdempotencyKey, when not empty, makes a repeat by the same user return
	// the first request's order.
	IdempotencyKey string
	// Quantity is the units asked for, 1..the activity's per-user limit;
	// 0 means 1.
	Quantity int64
}

// Units is the units asked for: Quantity, at least 1.
func (r BuyRequest) Units() int64 { return max(r.Quantity, 1) }

// AnswerHolder is the answer to r from a buyer who holds o, one order of
// the same activity: o again when r repeats the idempotency key o was
// bought with, otherwise already_purchased with o's id and status.
func (r BuyRequest) AnswerHolder(o Order) (Order, error) {
	if r.IdempotencyKey != "" && o.IdempotencyKey == r.IdempotencyKey {
		return o, nil
	}
	return Order{}, AlreadyPurchased(o)
}

// ActivityView is an activity with its live stock.
type ActivityView struct {
	Activity
	Remaining int64
	Status    string
	Room      *RoomView // nil: no waiting room
	// Paused: ops paused the sale (docs/API.md "Stopping a sale"), as the
	// flag every deduct checks says.
	Paused bool
}

// RoomView is a waiting room as the activity's answers show it.
type RoomView struct {
	OpensAt           time.Time
	Waiting, Admitted int64
}

// Audit compares the database, Redis and the activity's total.
type Audit struct {
	ActivityID     int64
	TotalStock     int64
	Orders         int64 // created and paid orders
	Units          int64 // the units those orders hold
	RedisRemaining int64 // 0 when Redis holds no stock for the activity
	Oversold       bool  // Units > TotalStock
	Consistent     bool  // Units + RedisRemaining == TotalStock
	// AdmittedOpen is the waiting room's admissions given and not used up
	// or lapsed; 0 without a room.
	AdmittedOpen int64
	// DrawSeed is the seed of the waiting room's draw, once the sale has
	// started ("" before, and without a room): with it anyone can recompute
	// every pre-queue place (docs/API.md).
	DrawSeed string
	// EventsPending is the activity's order events not yet acknowledged by
	// the sink (docs/API.md "Order events").
	EventsPending int64
}

// Reconciliation reports what Reconcile changed.
type Reconciliation struct {
	ActivityID int64
	TotalStock int64
	Orders     int64
	Before     int64 // Redis remaining before; -1 when none was loaded
	After      int64
	Changed    bool
	Fence      int64 // of the lock grant the load was made under
}

// LoadedBefore is Before, or nil when Redis held no stock for the activity,
// for reports where a sentinel number could be read as stock.
func (r Reconciliation) LoadedBefore() *int64 {
	if r.Before < 0 {
		return nil
	}
	return &r.Before
}

// StockAdjustment reports what AdjustStock changed.
type StockAdjustment struct {
	ActivityID int64
	Before     int64 // total stock before
	TotalStock int64 // total stock after
	Sold       int64 // units held by created and paid orders
	Remaining  int64 // loaded into Redis: TotalStock - Sold
}
