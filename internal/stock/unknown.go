package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

// A batch of an activity with a waiting room whose COMMIT had an unknown
// outcome is written down here, shared by every instance its buyers may
// retry on, so that a buyer's next purchase resolves it before taking a unit
// (internal/purchase/unknown.go says why). Keys (the activity's hash tag,
// ReceiptTTL, the receipt's lifetime: past it a settle is not guaranteed to
// find the receipt, and the books sweep has long repaired the stock):
//   - <prefix>seckill:{act:N}:unknown, a hash: user -> the batch's name,
//     "<fence>:<token>";
//   - <prefix>seckill:{act:N}:unknown:<fence>:<token>, the batch (JSON).

// ErrUnknownUnreadable is returned by Unknowns.Of when the batch that names
// the user cannot be decoded.
var ErrUnknownUnreadable = errors.New("stock: batch of unknown outcome unreadable")

// ErrUnknownStale is returned by Unknowns.Of, with no batch, when the user
// was named by a batch that expired with its receipt and the name could not
// be removed: the books sweep has repaired the stock, and the next look-up
// removes it again.
var ErrUnknownStale = errors.New("stock: stale name of an expired batch of unknown outcome not removed")

// UnknownBatch is a batch of unknown outcome as written down: its grant,
// its orders (id, user, idempotency key and quantity; on reading, the
// activity and the grant's fence too) and what Redis held right after its
// deduct (nil: a batch written without it).
type UnknownBatch struct {
	Grant     Grant
	Orders    []seckill.Order
	Remaining *int64
}

// Unknowns are the activities' batches of unknown outcome, in the Store's
// Redis, in its key space.
type Unknowns struct {
	rdb   redis.UniversalClient
	space keys.Space
}

// Unknowns returns the batches of unknown outcome kept beside the stock.
func (s *Store) Unknowns() Unknowns { return Unknowns{rdb: s.rdb, space: s.space} }

// unknownJSON is the stored form of an UnknownBatch.
type unknownJSON struct {
	Fence     int64         `json:"fence"`
	Token     string        `json:"token"`
	Orders    []unknownItem `json:"orders"`
	Remaining *int64        `json:"remaining,omitempty"`
}

type unknownItem struct {
	ID       string `json:"id"`
	UserID   int64  `json:"user_id"`
	Key      string `json:"key,omitempty"`
	Quantity int64  `json:"quantity,omitempty"`
}

// unknownName names the batch of grant g.
func unknownName(g Grant) string {
	return strconv.FormatInt(g.Fence, 10) + ":" + g.Token
}

// Remember writes down the activity's batch b, naming each of its
// buyers, for ReceiptTTL.
func (s Unknowns) Remember(ctx context.Context, activityID int64, b UnknownBatch) error {
	name := unknownName(b.Grant)
	stored := unknownJSON{Fence: b.Grant.Fence, Token: b.Grant.Token, Orders: make([]unknownItem, len(b.Orders)), Remaining: b.Remaining}
	fields := make([]any, 0, 2*len(b.Orders))
	for k, o := range b.Orders {
		stored.Orders[k] = unknownItem{ID: o.ID, UserID: o.UserID, Key: o.IdempotencyKey, Quantity: o.Quantity}
		fields = append(fields, strconv.FormatInt(o.UserID, 10), name)
	}
	body, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("stock: batch of unknown outcome %s: %w", name, err)
	}
	users := s.space.Unknown(activityID)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.space.UnknownBatch(activityID, name), body, ReceiptTTL)
		p.HSet(ctx, users, fields...)
		p.PExpire(ctx, users, ReceiptTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("stock: write down batch of unknown outcome %s: %w", name, err)
	}
	return nil
}

// Of returns the activity's batch of unknown outcome that names the
// user, and whether there is one. A name whose batch expired is removed and
// counts as none (ErrUnknownStale when the removal failed).
func (s Unknowns) Of(ctx context.Context, activityID, userID int64) (UnknownBatch, bool, error) {
	users, user := s.space.Unknown(activityID), strconv.FormatInt(userID, 10)
	name, err := s.rdb.HGet(ctx, users, user).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return UnknownBatch{}, false, nil
	case err != nil:
		return UnknownBatch{}, false, fmt.Errorf("stock: batch of unknown outcome of user %d: %w", userID, err)
	}
	body, err := s.rdb.Get(ctx, s.space.UnknownBatch(activityID, name)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		if err := s.rdb.HDel(ctx, users, user).Err(); err != nil {
			return UnknownBatch{}, false, fmt.Errorf("%w: batch %s, user %d: %w", ErrUnknownStale, name, userID, err)
		}
		return UnknownBatch{}, false, nil
	case err != nil:
		return UnknownBatch{}, false, fmt.Errorf("stock: batch of unknown outcome %s: %w", name, err)
	}
	var stored unknownJSON
	if err := json.Unmarshal(body, &stored); err != nil {
		return UnknownBatch{}, false, fmt.Errorf("%w: %s: %w", ErrUnknownUnreadable, name, err)
	}
	b := UnknownBatch{Grant: Grant{Fence: stored.Fence, Token: stored.Token}, Orders: make([]seckill.Order, len(stored.Orders)), Remaining: stored.Remaining}
	for k, o := range stored.Orders {
		b.Orders[k] = seckill.Order{ID: o.ID, ActivityID: activityID, UserID: o.UserID, IdempotencyKey: o.Key, Quantity: o.Quantity, Fence: stored.Fence}
	}
	return b, true, nil
}

// Forget removes the activity's batch b, resolved, and its buyers'
// names of it.
func (s Unknowns) Forget(ctx context.Context, activityID int64, b UnknownBatch) error {
	name := unknownName(b.Grant)
	users := make([]string, len(b.Orders))
	for k, o := range b.Orders {
		users[k] = strconv.FormatInt(o.UserID, 10)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.space.UnknownBatch(activityID, name))
		p.HDel(ctx, s.space.Unknown(activityID), users...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("stock: forget batch of unknown outcome %s: %w", name, err)
	}
	return nil
}
