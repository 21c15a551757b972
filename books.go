package seckill

import "fmt"

// Books is one activity's books at one look: its total, what the database
// holds against it and what Redis has left to sell. They balance when no
// unit is sold twice or lost: see Violations. The database side and the
// Redis side are read one after the other, so a look during a sale may
// catch a unit between them; the books are judged once sales have settled.
type Books struct {
	ActivityID int64
	TotalStock int64
	// Sold is the activity row's count of units sold (activities.sold),
	// which every order write and expiry moves in its own transaction.
	Sold int64
	// Held is the units held by the order rows that hold units (KeepsUnit:
	// created and paid): their quantities summed.
	Held int64
	// Rows is the count of all the activity's order rows, whatever their
	// status; Paid and Expired count those paid and expired.
	Rows, Paid, Expired int64
	// DuplicateUsers is the count of users with more than one order row.
	DuplicateUsers int64
	// RedisRemaining is the stock Redis has left; meaningful only when
	// RedisLoaded (Redis holds stock for the activity).
	RedisRemaining int64
	RedisLoaded    bool
}

// The checks of the books, as a Violation names them.
const (
	CheckOversold       = "oversold"        // Held > TotalStock
	CheckDuplicateUsers = "duplicate_users" // a user with two orders
	CheckRedisMissing   = "redis_missing"   // Redis holds no stock
	CheckRedisNegative  = "redis_negative"  // Redis remaining < 0
	CheckImbalance      = "imbalance"       // Held + RedisRemaining != TotalStock
	CheckSold           = "sold"            // Sold != Held
)

// Violation is one check the books fail: which (a Check* name) and a
// sentence that says it with the figures.
type Violation struct {
	Check   string
	Message string
}

func (v Violation) String() string { return v.Message }

// Violations returns every check the books fail, none when they balance:
// no more units held than the total, no user with two orders, Redis holding
// a stock that is not negative and that with the held units makes the
// total, and the activity row's sold count equal to the units held.
func (b Books) Violations() []Violation {
	var vs []Violation
	add := func(check, format string, args ...any) {
		vs = append(vs, Violation{Check: check, Message: fmt.Sprintf("activity %d: ", b.ActivityID) + fmt.Sprintf(format, args...)})
	}
	if b.Held > b.TotalStock {
		add(CheckOversold, "orders hold %d units of %d: oversold by %d", b.Held, b.TotalStock, b.Held-b.TotalStock)
	}
	if b.DuplicateUsers > 0 {
		add(CheckDuplicateUsers, "%d users hold more than one order", b.DuplicateUsers)
	}
	switch {
	case !b.RedisLoaded:
		add(CheckRedisMissing, "Redis holds no stock for it")
	case b.RedisRemaining < 0:
		add(CheckRedisNegative, "Redis remaining is %d (negative)", b.RedisRemaining)
	}
	if b.RedisLoaded && b.Held+b.RedisRemaining != b.TotalStock {
		add(CheckImbalance, "%d units held by orders + %d remaining in Redis != total %d (off by %+d)",
			b.Held, b.RedisRemaining, b.TotalStock, b.Imbalance())
	}
	if b.Sold != b.Held {
		add(CheckSold, "activities.sold is %d, orders hold %d units", b.Sold, b.Held)
	}
	return vs
}

// Oversold is how many units more than the total the orders hold, 0 when
// none.
func (b Books) Oversold() int64 { return max(b.Held-b.TotalStock, 0) }

// Imbalance is held + Redis remaining - total: positive when units are
// counted twice, negative when lost; 0 when Redis holds no stock.
func (b Books) Imbalance() int64 {
	if !b.RedisLoaded {
		return 0
	}
	return b.Held + b.RedisRemaining - b.TotalStock
}
