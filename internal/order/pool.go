package order

import (
	"errors"
	"fmt"
)

// MaxPoolConns bounds SetMaxConns: more connections than MySQL's default
// max_connections (151) from one instance is a typo.
const MaxPoolConns = 1024

// ErrPoolSize is returned by SetMaxConns for a size outside 1..MaxPoolConns.
var ErrPoolSize = errors.New("order: pool size out of range")

// DefaultMaxConns is the MySQL pool size Open sets: one connection for each of
// as many activities' batch leaders writing at once (each holds one for its
// batch's transaction), with the payment verifications and admin reads
// sharing the rest.
const DefaultMaxConns = maxOpenConns

// SetMaxConns sets the most connections the MySQL pool opens (and keeps idle).
// The embedded SQLite database keeps its one connection: it is the database
// for ":memory:", and SQLite has one writer anyway.
func (s *Store) SetMaxConns(n int) error {
	if n < 1 || n > MaxPoolConns {
		return fmt.Errorf("%w: %d, want 1..%d", ErrPoolSize, n, MaxPoolConns)
	}
	if !s.dialect.resizablePool {
		return nil
	}
	db, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("order: pool: %w", err)
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return nil
}

// MaxConns reports the pool's limit of open connections.
func (s *Store) MaxConns() int {
	db, err := s.db.DB()
	if err != nil {
		return 0
	}
	return db.Stats().MaxOpenConnections
}
