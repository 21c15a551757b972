// Package stock keeps each activity's unsold units in Redis and takes them one
// at a time, atomically.
//
// The flash-sale incident this service exists for sold more units than it had
// because stock was read (HGET) and then written (HINCRBY) in two commands:
// concurrent buyers all saw the same last unit. Here the check and the write
// are one Lua script, so Redis runs them as one step and the count can never
// be observed, or left, below zero. No lock is needed for that; the
// per-activity lock elsewhere only sheds load.
//
// Every key of one activity carries the hash tag {act:N}, so an activity's
// stock and lock live in the same Redis Cluster slot.
//
// Each load stamps the stock with an epoch (the fence of the lock grant the
// load ran under). A unit deducted before a reload must not be returned after
// it, as the reload already counted it as unsold: Return names the epoch of
// its deduct and is refused with ErrStale when the stock was reloaded since.
//
// A missing stock key means "not loaded" (never loaded, or Redis lost its
// data), which is not the same as sold out: Deduct and Return then change
// nothing and report ErrNotLoaded, and the operator reloads the stock from the
// database (total minus orders).
package stock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

var (
	// ErrSoldOut is returned by Deduct when no unit is left; nothing changed.
	ErrSoldOut = errors.New("stock: sold out")
	// ErrNotLoaded is returned when the activity's stock is not in Redis;
	// nothing changed.
	ErrNotLoaded = errors.New("stock: not loaded")
	// ErrStale is returned by Return when the stock was loaded again since the
	// deduct; nothing changed.
	ErrStale = errors.New("stock: reloaded since the deduct")
)

// Fields of the stock hash.
const (
	field      = "remaining"
	epochField = "epoch"
)

var (
	//go:embed deduct.lua
	deductSrc    string
	deductScript = redis.NewScript(deductSrc)

	//go:embed return.lua
	returnSrc    string
	returnScript = redis.NewScript(returnSrc)
)

// refused is the count deduct.lua answers when no unit was left, and
// return.lua when the epoch has moved on.
const refused = -1

// Store reads and changes activities' stock in Redis. It is safe for
// concurrent use, by any number of processes sharing the Redis.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
}

// New returns a Store on rdb whose keys all start with prefix (may be empty).
func New(rdb redis.UniversalClient, prefix string) *Store {
	return &Store{rdb: rdb, prefix: prefix}
}

// Load sets the activity's stock to remaining units in epoch, replacing what
// was there. remaining must not be negative.
func (s *Store) Load(ctx context.Context, activityID, remaining, epoch int64) error {
	if remaining < 0 {
		return fmt.Errorf("stock: load activity %d: negative stock %d", activityID, remaining)
	}
	if err := s.rdb.HSet(ctx, s.key(activityID), field, remaining, epochField, epoch).Err(); err != nil {
		return fmt.Errorf("stock: load activity %d: %w", activityID, err)
	}
	return nil
}

// Deduct takes one unit and returns how many are left and the epoch of the
// stock it was taken from (for Return). With none left it
// returns ErrSoldOut; with the stock not loaded, ErrNotLoaded. In both cases,
// and on any other error, Redis holds what it held before, except that a
// transport error can hide a deduct that did happen; callers that must know
// compare Remaining with their order count (the audit does).
func (s *Store) Deduct(ctx context.Context, activityID int64) (remaining, epoch int64, err error) {
	reply, err := deductScript.Run(ctx, s.rdb, []string{s.key(activityID)}).Int64Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, 0, fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, 0, fmt.Errorf("stock: deduct activity %d: %w", activityID, err)
	case len(reply) != 2:
		return 0, 0, fmt.Errorf("stock: deduct activity %d: unexpected reply %v", activityID, reply)
	case reply[0] == refused:
		return 0, reply[1], fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrSoldOut)
	}
	return reply[0], reply[1], nil
}

// Return puts back one unit deducted in epoch (a deduct whose order could not
// be written) and returns how many are left. With the stock not loaded it
// returns ErrNotLoaded and creates nothing; with the stock loaded again since
// the deduct, ErrStale and changes nothing: either way the next or last load
// counts the unit from the database.
func (s *Store) Return(ctx context.Context, activityID, epoch int64) (remaining int64, err error) {
	left, err := returnScript.Run(ctx, s.rdb, []string{s.key(activityID)}, epoch).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: return to activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: return to activity %d: %w", activityID, err)
	case left == refused:
		return 0, fmt.Errorf("stock: return to activity %d in epoch %d: %w", activityID, epoch, ErrStale)
	}
	return left, nil
}

// Remaining returns the units left, or ErrNotLoaded.
func (s *Store) Remaining(ctx context.Context, activityID int64) (int64, error) {
	left, err := s.rdb.HGet(ctx, s.key(activityID), field).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: remaining of activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: remaining of activity %d: %w", activityID, err)
	}
	return left, nil
}

func (s *Store) key(activityID int64) string { return Key(s.prefix, activityID) }

// Key returns the name of the activity's stock hash (fields "remaining" and
// "epoch"):
// <prefix>seckill:{act:N}:stock.
func Key(prefix string, activityID int64) string {
	return prefix + "seckill:{act:" + strconv.FormatInt(activityID, 10) + "}:stock"
}

// LockKey returns the name of the activity's lock key,
// <prefix>seckill:{act:N}:lock, in the same Cluster slot as its stock.
func LockKey(prefix string, activityID int64) string {
	return prefix + "seckill:{act:" + strconv.FormatInt(activityID, 10) + "}:lock"
}
