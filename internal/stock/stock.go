// Package stock keeps each activity's unsold units in Redis and takes them,
// a lock grant's batch at a time, atomically.
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
// One lock grant deducts once, for its whole batch of buyers, and leaves a
// receipt named by the grant's fence that records how many units it holds.
// Units whose orders cannot be written go back with Settle, which lowers the
// receipt to what the grant keeps: a unit goes back at most once, settling
// again (or a resend of it) returns nothing more, and a caller whose deduct
// timed out can settle at 0 without knowing whether the deduct landed. When
// it did not, Settle leaves a tombstone receipt, so a deduct that lands late
// takes nothing. Each load stamps the stock with an epoch (the fence of the
// lock grant the load ran under) and a receipt remembers the epoch it was
// taken in: a unit deducted before a reload is not returned after it, as the
// reload already counted it as unsold.
//
// # Receipts
//
// The receipt of grant F (owner token T) is the string
// <prefix>seckill:{act:N}:deduct:<F>:<T>,
// living ReceiptTTL, with the value "<epoch>:<units>": F's deduct took
// <units> in stock epoch <epoch>, and Settle lowers <units> to what F keeps.
// Settle for a deduct that had not landed leaves "<epoch>:0", a tombstone. A
// deduct for F that finds any receipt takes nothing: a resend of a deduct that
// landed reports what the grant holds, and a deduct landing after its grant
// settled at 0 (a command that timed out on the client but reached Redis
// later) reports ErrReturned. A deduct landing more than ReceiptTTL after its
// settle is not covered; go-redis resends and TCP retransmits arrive within
// seconds.
//
// # The ledger
//
// Every unit out of the stock is in exactly one receipt. A load records what
// it put in (field "loaded") beside the epoch, and from then on, after every
// script (each is one atomic step):
//
//	loaded == remaining + units held by the epoch's deduct receipts
//	                    - the epoch's order-return receipts
//
// A deduct moves units from remaining into its receipt, a settle moves them
// back, an expired order's return adds one unit and leaves its receipt. A
// deduct that took units its receipt does not record (a resend taking them
// again) breaks it, though the books sweep later hides the loss by reloading.
// The chaos campaign (internal/testkit/chaos, ledger.lua) checks the ledger
// throughout.
//
// A missing stock key means "not loaded" (never loaded, or Redis lost its
// data), which is not the same as sold out: DeductEach and Settle then change
// nothing and report ErrNotLoaded, and the operator reloads the stock from the
// database (total minus orders).
package stock

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
)

var (
	// ErrSoldOut is returned by DeductEach when no unit is left; nothing changed.
	ErrSoldOut = errors.New("stock: sold out")
	// ErrNotLoaded is returned when the activity's stock is not in Redis;
	// nothing changed.
	ErrNotLoaded = seckill.ErrStockNotLoaded
	// ErrStale is returned by Settle when the stock was loaded again since the
	// deduct; nothing changed.
	ErrStale = errors.New("stock: reloaded since the deduct")
	// ErrNoDeduct is returned by Settle when the grant's deduct never
	// landed; a tombstone now keeps a late one from taking anything.
	ErrNoDeduct = errors.New("stock: no deduct to return")
	// ErrReturned is returned by DeductEach when the grant already settled
	// everything back (or settled before this deduct landed: it arrived after
	// its caller gave up on it); nothing changed.
	ErrReturned = errors.New("stock: deduct arrived after its grant settled")
	// ErrLockLost is returned by LoadIfHeld when the activity's lock is no
	// longer the given grant's; nothing changed.
	ErrLockLost = errors.New("stock: lock no longer held")
	// ErrBadReceipt is returned by DeductEach when Redis reports more units taken
	// than were asked for: the count is not this grant's, and the outcome is
	// unknown (Settle of the grant returns what it does hold).
	ErrBadReceipt = errors.New("stock: receipt does not match the deduct")
	// ErrNotAdmitted is returned by DeductEach, inside a *NotAdmittedError, when
	// the activity has a waiting room and some buyers hold no open
	// admission: nothing was taken.
	ErrNotAdmitted = errors.New("stock: buyers not admitted by the waiting room")
)

// ReceiptTTL is how long a deduct's receipt lives: the time within which its
// units can be put back. Past it, only a reload (reconciliation) recovers them.
const ReceiptTTL = 5 * time.Minute

// luaFiles holds the package's scripts, one .lua file each.
//
//go:embed *.lua
var luaFiles embed.FS

var (
	// deductScript takes a grant's units atomically and leaves its receipt.
	deductScript = luascript.LoadWithPrelude(luaFiles, "deduct.lua")
	// settleScript settles a grant's deduct: what it keeps, and the rest back.
	settleScript = luascript.LoadWithPrelude(luaFiles, "settle.lua")
	// loadIfHeldScript loads the stock only while the grant's lock is held.
	loadIfHeldScript = luascript.LoadWithPrelude(luaFiles, "loadifheld.lua")
)

// Answers of the scripts that are not counts.
const (
	reloaded  = -1 // settle.lua: the stock was loaded again since the deduct
	noReceipt = -2 // settle.lua: the deduct never landed
	settled   = -3 // deduct.lua: the grant settled everything back already

	refusedNotAdmitted = -4 // deduct.lua: buyers the waiting room has not admitted
	refusedPaused      = -5 // deduct.lua: ops paused the sale
	refusedEnded       = -6 // deduct.lua: ops ended the sale
	refusedInFlight    = -7 // deduct.lua: buyers whose units another grant holds
)

// Store reads and changes activities' stock in Redis. It is safe for
// concurrent use, by any number of processes sharing the Redis.
type Store struct {
	rdb   redis.UniversalClient
	space keys.Space
}

// New returns a Store on rdb naming its keys in space.
func New(rdb redis.UniversalClient, space keys.Space) *Store {
	return &Store{rdb: rdb, space: space}
}

// Keys is the key space the store names its keys in: the services on it
// name the activity's other keys (its lock, the payments' locks) there, so
// the scripts that touch them together find them in the activity's slot.
func (s *Store) Keys() keys.Space { return s.space }

// Load sets the activity's stock to remaining units in epoch, replacing what
// was there. remaining must not be negative.
func (s *Store) Load(ctx context.Context, activityID, remaining, epoch int64) error {
	if remaining < 0 {
		return fmt.Errorf("stock: load activity %d: negative stock %d", activityID, remaining)
	}
	if err := s.rdb.HSet(ctx, s.key(activityID), keys.StockRemaining, remaining, keys.StockEpoch, epoch, keys.StockLoaded, remaining).Err(); err != nil {
		return fmt.Errorf("stock: load activity %d: %w", activityID, err)
	}
	return nil
}

// LoadIfHeld is Load, done only while the activity's lock (LockKey) holds
// lockValue, the value of the grant the load runs under (lock.Lock.Value):
// checked and loaded in one step, so a load that reaches Redis after the
// lease ended never overwrites a newer holder's stock. It returns
// ErrLockLost, having changed nothing, when the lock is gone or another's.
//
// halt is the sale's stop as the database has it: the load writes the
// flags the deduct checks (stop.go) with the stock, in the same step.
func (s *Store) LoadIfHeld(ctx context.Context, activityID, remaining, epoch int64, lockValue string, halt Halt) error {
	if remaining < 0 {
		return fmt.Errorf("stock: load activity %d: negative stock %d", activityID, remaining)
	}
	loaded, err := loadIfHeldScript.Run(ctx, s.rdb, []string{s.key(activityID), s.space.Lock(activityID)},
		lockValue, remaining, epoch, halt.pausedArg(), halt.endedArg()).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("stock: load activity %d: %w", activityID, err)
	case loaded != 1:
		return fmt.Errorf("stock: load activity %d: %w", activityID, ErrLockLost)
	}
	return nil
}

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.rdb.Ping(ctx).Err()
}

// Settle settles the deduct of grant fence: the grant keeps keep units (the
// orders it wrote) and the rest go back. It returns how many are left and
// how many went back. It is safe to call whether or not the deduct landed,
// and more than once: a second Settle with the same or a larger keep returns
// nothing more. ErrNoDeduct means the deduct never landed (and now never
// will: a late one takes nothing). With the stock loaded again since the
// deduct it returns ErrStale, and with the stock not loaded ErrNotLoaded;
// both return nothing, as the next or last load counts the units from the
// database.
func (s *Store) Settle(ctx context.Context, activityID int64, g Grant, keep int64) (remaining, returned int64, err error) {
	fence := g.Fence
	if keep < 0 {
		return 0, 0, fmt.Errorf("stock: settle activity %d for fence %d: negative keep %d", activityID, fence, keep)
	}
	reply, err := settleScript.Run(ctx, s.rdb, s.keys(activityID, g), keep, ReceiptTTL.Milliseconds()).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, 0, fmt.Errorf("stock: settle activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, 0, fmt.Errorf("stock: settle activity %d: %w", activityID, err)
	}
	switch reply {
	case int64(reloaded):
		return 0, 0, fmt.Errorf("stock: settle activity %d for fence %d: %w", activityID, fence, ErrStale)
	case int64(noReceipt):
		return 0, 0, fmt.Errorf("stock: settle activity %d for fence %d: %w", activityID, fence, ErrNoDeduct)
	}
	left, back, ok := pair(reply)
	if !ok {
		return 0, 0, fmt.Errorf("stock: settle activity %d: unexpected reply %v", activityID, reply)
	}
	return left, back, nil
}

// Holders reports which of the users are in the activity's buyer set: every
// user who holds an order of the activity is, and so may a user whose unit
// went back. One round trip (SMISMEMBER), for all of them.
func (s *Store) Holders(ctx context.Context, activityID int64, users []int64) (map[int64]bool, error) {
	in := make(map[int64]bool, len(users))
	if len(users) == 0 {
		return in, nil
	}
	members := make([]any, len(users))
	for i, u := range users {
		members[i] = u
	}
	got, err := s.rdb.SMIsMember(ctx, s.buyers(activityID), members...).Result()
	if err != nil {
		return nil, fmt.Errorf("stock: buyers of activity %d: %w", activityID, err)
	}
	for i, ok := range got {
		if ok {
			in[users[i]] = true
		}
	}
	return in, nil
}

// HoldersIn is Holders for several activities (users by activity id), in
// one round trip (a pipeline: one SMISMEMBER each).
func (s *Store) HoldersIn(ctx context.Context, users map[int64][]int64) (map[int64]map[int64]bool, error) {
	cmds := make(map[int64]*redis.BoolSliceCmd, len(users))
	pipe := s.rdb.Pipeline()
	for activityID, us := range users {
		members := make([]any, len(us))
		for i, u := range us {
			members[i] = u
		}
		cmds[activityID] = pipe.SMIsMember(ctx, s.buyers(activityID), members...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("stock: buyers of %d activities: %w", len(users), err)
	}
	in := make(map[int64]map[int64]bool, len(users))
	for activityID, cmd := range cmds {
		got := make(map[int64]bool)
		for i, ok := range cmd.Val() {
			if ok {
				got[users[activityID][i]] = true
			}
		}
		in[activityID] = got
	}
	return in, nil
}

// buyers is the key of the activity's buyer set:
// <prefix>seckill:{act:N}:buyers.
func (s *Store) buyers(activityID int64) string { return s.space.Buyers(activityID) }

// Remaining returns the units left, or ErrNotLoaded.
func (s *Store) Remaining(ctx context.Context, activityID int64) (int64, error) {
	left, err := s.rdb.HGet(ctx, s.key(activityID), keys.StockRemaining).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, fmt.Errorf("stock: remaining of activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, fmt.Errorf("stock: remaining of activity %d: %w", activityID, err)
	}
	return left, nil
}

func (s *Store) key(activityID int64) string { return s.space.Stock(activityID) }

// keys are the stock hash and the receipt of grant g, the scripts' KEYS.
func (s *Store) keys(activityID int64, g Grant) []string {
	return []string{s.key(activityID), s.receipt(activityID, g)}
}

// Grant names the lock grant a deduct is made under: its fence and its
// owner token. Two grants can share a fence (a Redis failover that lost the
// fence counter's last INCRs hands an old fence out again), never a token.
type Grant struct {
	Fence int64
	Token string // the lock's value; "" only in tests of one grant per fence
}

// receipt is the key of the deduct made under grant g:
// <prefix>seckill:{act:N}:deduct:<fence>:<token>. Keyed by the token too, a
// resent deduct of an old holder never reads a newer grant's receipt with
// the same fence as its own.
func (s *Store) receipt(activityID int64, g Grant) string {
	name := "deduct:" + strconv.FormatInt(g.Fence, 10)
	if g.Token != "" {
		name += ":" + g.Token
	}
	return s.space.Activity(activityID, name)
}
