// Package naive is incident A's purchase handler (docs/SEEDS.md), kept only
// to prove that the tests and the load test catch an oversell. Nothing in the
// service imports it: the e2e tests call it directly, and loadtest/naiveserver
// (loadtest/run.sh --naive) serves it in place of the service's purchase.
//
// It keeps the seed's three faults and adds no other:
//   - the lock has a constant value and a TTL shorter than the verification
//     call (the seed's 10 s lock sat under a 30 s HTTP timeout);
//   - the release is a blind DEL, which deletes whoever holds the lock now;
//   - the stock check reads, then writes, and the order is inserted without
//     the database's fence and stock guard.
//
// It sells a quantity the same way (BuyUnits): it reads the units left,
// refuses when fewer than asked, and decrements by the quantity after the
// same stall, so two holders that each read enough for themselves both sell.
package naive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// The answers a caller maps to the contract's codes.
var (
	ErrBusy     = errors.New("naive: the activity's lock is held")
	ErrSoldOut  = errors.New("naive: sold out")
	ErrRejected = errors.New("naive: the user was rejected")
)

// NotEnoughError is the answer to a quantity above the units the read saw
// left (but some are): the contract's not_enough_stock.
type NotEnoughError struct {
	Remaining int64
}

func (e *NotEnoughError) Error() string {
	return fmt.Sprintf("naive: only %d units left", e.Remaining)
}

// ReadWriteGap is the stall between the stock read and the decrement, in
// lock TTLs. In the seed the gap was one Redis round trip plus whatever the
// handler did there, so two holders had to read a sale's last unit within
// about a millisecond: a load test caught it in most runs, not all (7 of 8).
// With three TTLs, the holders that overlap once the lock has expired under
// them (a new one each TTL) all read the last unit before the first one
// writes, so every sale that crosses its last unit with overlapping holders
// oversells. It adds no mechanism: with an atomic deduct the same stall
// sells nothing twice.
const ReadWriteGap = 3

// Seed sells as the seed's handler did.
type Seed struct {
	Redis redis.UniversalClient
	// DB is the MySQL/MariaDB database holding the service's orders table.
	DB    *sql.DB
	Users usercheck.Verifier
	// Prefix is the service's key prefix (SECKILL_KEY_PREFIX): the stock
	// read and decremented is the service's own.
	Prefix  string
	LockTTL time.Duration
}

// Buy sells one unit of the activity to the user and returns the order's
// id, or ErrBusy, ErrSoldOut, ErrRejected or another error.
func (s *Seed) Buy(ctx context.Context, activityID, userID int64) (string, error) {
	return s.BuyUnits(ctx, activityID, userID, 1)
}

// BuyUnits sells quantity units of the activity to the user in one order,
// as Buy sells one; fewer units left than asked is a *NotEnoughError.
func (s *Seed) BuyUnits(ctx context.Context, activityID, userID, quantity int64) (string, error) {
	key := s.Prefix + "naive:key:" + strconv.FormatInt(activityID, 10)
	ok, err := s.Redis.SetNX(ctx, key, "val", s.LockTTL).Result()
	if err != nil {
		return "", fmt.Errorf("naive: lock: %w", err)
	}
	if !ok {
		return "", ErrBusy
	}
	defer s.Redis.Del(context.WithoutCancel(ctx), key)

	if err := s.Users.Verify(ctx, userID, activityID); err != nil {
		if errors.Is(err, usercheck.ErrRejected) {
			return "", ErrRejected
		}
		return "", fmt.Errorf("naive: user check: %w", err)
	}
	stockKey := keys.NewSpace(s.Prefix).Stock(activityID)
	n, err := s.Redis.HGet(ctx, stockKey, "remaining").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("naive: read stock: %w", err)
	}
	if n <= 0 {
		return "", ErrSoldOut
	}
	if n < quantity {
		return "", &NotEnoughError{Remaining: n}
	}
	if err := sleep(ctx, ReadWriteGap*s.LockTTL); err != nil {
		return "", err
	}
	if err := s.Redis.HIncrBy(ctx, stockKey, "remaining", -quantity).Err(); err != nil {
		return "", fmt.Errorf("naive: decrement stock: %w", err)
	}
	id := uuid.NewString()
	if _, err := s.DB.ExecContext(ctx,
		"INSERT INTO orders (id, activity_id, user_id, status, fence, quantity, created_at) VALUES (?, ?, ?, 'created', 0, ?, ?)",
		id, activityID, userID, quantity, time.Now().UTC()); err != nil {
		return "", fmt.Errorf("naive: insert order: %w", err)
	}
	return id, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("naive: %w", ctx.Err())
	}
}
