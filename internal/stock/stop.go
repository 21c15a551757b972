package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
)

// Stopping a sale (docs/API.md "Stopping a sale"). Ops pause, resume or end
// a sale on one instance, and every instance must answer from then on: so
// the stop is two fields of the stock hash, "paused" (since when, unix ms)
// and "ended", which deduct.lua checks in the same step as it takes units.
// No instance's cache can sell past them. They live in the stock hash so
// that a Redis that lost them lost the stock too (nothing sells then), and
// the load that brings the stock back writes them from the database
// (LoadIfHeld's Halt) in the same step.

var (
	// ErrPaused is returned by DeductEach when ops paused the sale: nothing
	// was taken.
	ErrPaused = errors.New("stock: the sale is paused")
	// ErrEnded is returned by DeductEach when ops ended the sale: nothing was
	// taken.
	ErrEnded = errors.New("stock: the sale was ended")
)

// resumeScript clears the pause and moves the room's open admissions later
// by its length.
var resumeScript = luascript.LoadWithPrelude(luaFiles, "resume.lua")

// Halt is a sale's stop as the database keeps it, for a load.
type Halt struct {
	PausedAt time.Time // zero: not paused
	Ended    bool      // ops ended it (its ends_at is past)
}

func (h Halt) pausedArg() string {
	if h.PausedAt.IsZero() {
		return ""
	}
	return strconv.FormatInt(h.PausedAt.UnixMilli(), 10)
}

func (h Halt) endedArg() string {
	if h.Ended {
		return "1"
	}
	return ""
}

// stoppedErr reads deduct.lua's refusals of a stopped sale; nil for any
// other reply.
func stoppedErr(reply any) error {
	switch reply {
	case int64(refusedPaused):
		return ErrPaused
	case int64(refusedEnded):
		return ErrEnded
	}
	return nil
}

// Pause stops the activity's deducts from now on, keeping the first time
// when it is paused already. With the stock not loaded it sets the flag all
// the same: nothing sells until a load, which writes the flag as the
// database has it.
func (s *Store) Pause(ctx context.Context, activityID int64, at time.Time) error {
	if err := s.rdb.HSetNX(ctx, s.key(activityID), keys.StockPaused, at.UnixMilli()).Err(); err != nil {
		return fmt.Errorf("stock: pause activity %d: %w", activityID, err)
	}
	return nil
}

// Resume lets the activity's deducts take units again and moves the open
// admissions of its waiting room later by the pause's length, which it
// returns (0 when it was not paused).
func (s *Store) Resume(ctx context.Context, activityID int64) (time.Duration, error) {
	ks := []string{s.key(activityID), s.space.WaitingAdmitted(activityID), s.space.WaitingSeen(activityID)}
	ms, err := resumeScript.Run(ctx, s.rdb, ks).Int64()
	if err != nil {
		return 0, fmt.Errorf("stock: resume activity %d: %w", activityID, err)
	}
	return time.Duration(max(ms, 0)) * time.Millisecond, nil
}

// End stops the activity's deducts for good: ops ended the sale.
func (s *Store) End(ctx context.Context, activityID int64) error {
	if err := s.rdb.HSet(ctx, s.key(activityID), keys.StockEnded, 1).Err(); err != nil {
		return fmt.Errorf("stock: end activity %d: %w", activityID, err)
	}
	return nil
}

// Paused reports whether the activity's sale is paused in Redis, the flag
// every deduct checks: fresh, for answers that must not lag another
// instance's pause (a join, the activity's body).
func (s *Store) Paused(ctx context.Context, activityID int64) (bool, error) {
	n, err := s.rdb.HExists(ctx, s.key(activityID), keys.StockPaused).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("stock: paused of activity %d: %w", activityID, err)
	}
	return n, nil
}

// Ended reports whether ops ended the activity's sale, as Redis's flag
// says: fresh, for the answers before the start, which no deduct checks,
// and which must not lag another instance's end.
func (s *Store) Ended(ctx context.Context, activityID int64) (bool, error) {
	n, err := s.rdb.HExists(ctx, s.key(activityID), keys.StockEnded).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("stock: ended of activity %d: %w", activityID, err)
	}
	return n, nil
}

// Stop is a sale's stop as Redis's flags say it.
type Stop struct {
	Paused, Ended bool
}

// RemainingStop is Remaining and the sale's Stop in one round trip, for the
// activity's body: ErrNotLoaded when no stock is loaded (the stop is then
// still read).
func (s *Store) RemainingStop(ctx context.Context, activityID int64) (remaining int64, stop Stop, err error) {
	v, err := s.rdb.HMGet(ctx, s.key(activityID), keys.StockRemaining, keys.StockPaused, keys.StockEnded).Result()
	if err != nil {
		return 0, Stop{}, fmt.Errorf("stock: remaining of activity %d: %w", activityID, err)
	}
	stop = Stop{Paused: v[1] != nil, Ended: v[2] != nil}
	str, ok := v[0].(string)
	if !ok {
		return 0, stop, fmt.Errorf("stock: remaining of activity %d: %w", activityID, ErrNotLoaded)
	}
	remaining, err = strconv.ParseInt(str, 10, 64)
	if err != nil {
		return 0, stop, fmt.Errorf("stock: remaining of activity %d: %w", activityID, err)
	}
	return remaining, stop, nil
}
