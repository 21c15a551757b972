package order

import (
	"context"
	"fmt"
	"sync/atomic"

	"gorm.io/gorm"
)

// Store is the order database, opened once (Open, New), with its tables by
// job: the activities, the orders and their statuses, the outbox of order
// events, and the payments' delay queue. The parts share one connection pool
// and the dialect chosen when the store opened. It is safe for concurrent
// use.
type Store struct {
	conn
	Activities *Activities
	Orders     *Orders
	Outbox     *Outbox
	DelayQueue *DelayQueue
}

// conn is what the store's parts share: the database and its dialect.
type conn struct {
	db      *gorm.DB
	dialect dialect
}

// Activities reads and writes activities: the rows that carry each sale's
// total, the units sold and the fence of the last writer, which the order
// writes claim under lock; their prices, waiting rooms, pause and end; and
// their books.
type Activities struct{ conn }

// Outbox is the relay's side of the order events (outbox.go, eventbatch.go):
// claims, marks, the handoff of a group's batch, and retention.
type Outbox struct {
	conn
	handoff *atomic.Pointer[Handoff]
}

// DelayQueue is the payments' delay queue (queue.go): the created orders
// whose pay_by is due.
type DelayQueue struct{ conn }

// New returns a Store on db, whose schema must be migrated already (Open does
// both). Store times are UTC at microsecond precision.
func New(db *gorm.DB) *Store {
	c := conn{db: db, dialect: dialectOf(db.Dialector.Name())}
	handoff := new(atomic.Pointer[Handoff])
	return &Store{
		conn:       c,
		Activities: &Activities{conn: c},
		Orders:     &Orders{conn: c, handoff: handoff},
		Outbox:     &Outbox{conn: c, handoff: handoff},
		DelayQueue: &DelayQueue{conn: c},
	}
}

// Close closes the database connections.
func (s *Store) Close() error {
	db, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("order: close: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("order: close: %w", err)
	}
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	db, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("order: ping: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("order: ping: %w", err)
	}
	return nil
}
