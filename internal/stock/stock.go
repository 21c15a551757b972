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
// stock, receipts and lock live in the same Redis Cluster slot.
//
// A unit whose order cannot be written goes back with Return. Each deduct
// leaves a receipt named by the caller's lock fence, and Return consumes it:
// a unit goes back at most once, and a caller whose deduct timed out can call
// Return without knowing whether the deduct landed (retrying it is safe too).
// Each load stamps the stock with an epoch (the fence of the lock grant the
// load ran under) and a receipt remembers the epoch it was taken in: a unit
// deducted before a reload is not returned after it, as the reload already
// counted it as unsold.
//
// # Receipts
//
// The receipt of fence F is the string <prefix>seckill:{act:N}:deduct:<F>,
// living ReceiptTTL. Its value is one of:
//
//   - "<epoch>" (decimal): F's deduct took its unit in stock epoch <epoch>;
//   - "returned" (the tombstone): Return ran for F, whether it put a unit
//     back or found no receipt (the deduct had not landed yet).
//
// A deduct for F that finds any receipt takes nothing: a resend of a deduct
// that landed reports what is left, and a deduct landing after its Return
// (a command that timed out on the client but reached Redis later) reports
// ErrReturned. Return turns every receipt into the tombstone. A deduct that
// lands more than ReceiptTTL after its Return is not covered; go-redis
// resends and TCP retransmits arrive within seconds.
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
	"time"

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
	// ErrNoDeduct is returned by Return when there is nothing to put back:
	// the deduct never landed, or its unit was returned already.
	ErrNoDeduct = errors.New("stock: no deduct to return")
	// ErrReturned is returned by Deduct when Return already ran for the
	// fence: the deduct arrived after its caller gave up on it; nothing
	// changed.
	ErrReturned = errors.New("stock: deduct arrived after its return")
	// ErrLockLost is returned by LoadIfHeld when the activity's lock is no
	// longer the given grant's; nothing changed.
	ErrLockLost = errors.New("stock: lock no longer held")
)

// ReceiptTTL is how long a deduct's receipt lives: the time within which its
// unit can be put back. Past it, only a reload (reconciliation) recovers it.
const ReceiptTTL = 5 * time.Minute

// receiptReturned is the tombstone Return leaves in a receipt (see the
// package doc); it is never a decimal epoch.
const receiptReturned = "returned"

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
	//go:embed loadifheld.lua
	loadIfHeldSrc    string
	loadIfHeldScript = redis.NewScript(loadIfHeldSrc)
)

// Answers of the scripts that are not counts.
const (
	refused   = -1 // deduct.lua: none left; return.lua: reloaded since
	noReceipt = -2 // deduct.lua: the receipt is a tombstone; return.lua: nothing to return
)

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

// LoadIfHeld is Load, done only while the activity's lock (LockKey) holds
// lockValue, the value of the grant the load runs under (lock.Lock.Value):
// checked and loaded in one step, so a load that reaches Redis after the
// lease ended never overwrites a newer holder's stock. It returns
// ErrLockLost, having changed nothing, when the lock is gone or another's.
func (s *Store) LoadIfHeld(ctx context.Context, activityID, remaining, epoch int64, lockValue string) error {
	if remaining < 0 {
		return fmt.Errorf("stock: load activity %d: negative stock %d", activityID, remaining)
	}
	loaded, err := loadIfHeldScript.Run(ctx, s.rdb, []string{s.key(activityID), LockKey(s.prefix, activityID)},
		lockValue, remaining, epoch).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("stock: load activity %d: %w", activityID, err)
	case loaded != 1:
		return fmt.Errorf("stock: load activity %d: %w", activityID, ErrLockLost)
	}
	return nil
}

// Deduct takes one unit for the lock grant fence and returns how many are
// left. With none left it returns ErrSoldOut; with the stock not loaded,
// ErrNotLoaded; in both cases nothing changed. On any other error the deduct
// may or may not have happened: Return(fence) puts the unit back if it did.
// One fence takes at most one unit: a repeated Deduct for the same fence
// (a retry after a lost reply) takes nothing more and reports what is left,
// and one after Return(fence) takes nothing and reports ErrReturned.
func (s *Store) Deduct(ctx context.Context, activityID, fence int64) (remaining int64, err error) {
	left, err := deductScript.Run(ctx, s.rdb, []string{s.key(activityID), s.receipt(activityID, fence)},
		ReceiptTTL.Milliseconds(), receiptReturned).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: deduct activity %d: %w", activityID, err)
	case left == refused:
		return 0, fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrSoldOut)
	case left == noReceipt:
		return 0, fmt.Errorf("stock: deduct activity %d for fence %d: %w", activityID, fence, ErrReturned)
	}
	return left, nil
}

// Return puts back the unit that Deduct took for fence and returns how many
// are left. It is safe to call whether or not the deduct landed, and more
// than once: ErrNoDeduct means there was nothing (more) to put back. With the
// stock loaded again since the deduct it returns ErrStale, and with the stock
// not loaded ErrNotLoaded; both change nothing, as the next or last load
// counts the unit from the database. In every case it leaves the tombstone
// that keeps the fence's deduct, should it land later, from taking a unit.
func (s *Store) Return(ctx context.Context, activityID, fence int64) (remaining int64, err error) {
	left, err := returnScript.Run(ctx, s.rdb, []string{s.key(activityID), s.receipt(activityID, fence)},
		receiptReturned, ReceiptTTL.Milliseconds()).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: return to activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: return to activity %d: %w", activityID, err)
	case left == noReceipt:
		return 0, fmt.Errorf("stock: return to activity %d for fence %d: %w", activityID, fence, ErrNoDeduct)
	case left == refused:
		return 0, fmt.Errorf("stock: return to activity %d for fence %d: %w", activityID, fence, ErrStale)
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

// receipt is the key of the deduct made under fence:
// <prefix>seckill:{act:N}:deduct:<fence>.
func (s *Store) receipt(activityID, fence int64) string {
	return activityKey(s.prefix, activityID, "deduct:"+strconv.FormatInt(fence, 10))
}

// Key returns the name of the activity's stock hash (fields "remaining" and
// "epoch"):
// <prefix>seckill:{act:N}:stock.
func Key(prefix string, activityID int64) string { return activityKey(prefix, activityID, "stock") }

// LockKey returns the name of the activity's lock key,
// <prefix>seckill:{act:N}:lock, in the same Cluster slot as its stock.
func LockKey(prefix string, activityID int64) string { return activityKey(prefix, activityID, "lock") }

// activityKey names one of the activity's keys, all under the hash tag
// {act:N}: <prefix>seckill:{act:N}:<name>.
func activityKey(prefix string, activityID int64, name string) string {
	return prefix + "seckill:{act:" + strconv.FormatInt(activityID, 10) + "}:" + name
}
