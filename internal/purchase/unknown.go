package purchase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// A batch of an activity with a waiting room whose COMMIT had an unknown
// outcome (503 outcome_unknown) leaves its units deducted and its buyers'
// admissions open: a 503 is not final. Were a buyer's retry sold to like
// any other, one admission would hold two deducted units until the books
// sweep gave the first back, and the room, which counts one unit per open
// admission, would let another admitted buyer hear sold_out. So such a
// batch is written down in Redis (shared by every instance the buyer may
// retry on), and an admitted buyer's next purchase first resolves it, as
// resolveCommit would have: units back when nothing committed, each order
// answered when it did. While the database still cannot tell, the retry is
// told outcome_unknown again and takes no unit.
//
// Keys (the activity's hash tag, ReceiptTTL, the receipt's lifetime: past
// it a settle is not guaranteed to find the receipt, and the sweep has long
// repaired the stock):
//   - <prefix>seckill:{act:N}:unknown, a hash: user -> the batch's name;
//   - <prefix>seckill:{act:N}:unknown:<fence>:<token>, the batch (JSON).

// unknownBatch is what resolving a batch again needs: its grant and orders.
type unknownBatch struct {
	Fence  int64         `json:"fence"`
	Token  string        `json:"token"`
	Orders []unknownItem `json:"orders"`
	// Remaining is what Redis held right after the batch's deduct (the
	// sale's remaining); absent from a batch written without it.
	Remaining *int64 `json:"remaining,omitempty"`
}

type unknownItem struct {
	ID       string `json:"id"`
	UserID   int64  `json:"user_id"`
	Key      string `json:"key,omitempty"`
	Quantity int64  `json:"quantity,omitempty"`
}

// unknownName names the batch of grant g.
func unknownName(g stock.Grant) string {
	return strconv.FormatInt(g.Fence, 10) + ":" + g.Token
}

func (s *Service) unknownUsersKey(activityID int64) string {
	return s.stock.Keys().Unknown(activityID)
}

func (s *Service) unknownBatchKey(activityID int64, name string) string {
	return s.stock.Keys().UnknownBatch(activityID, name)
}

// rememberUnknown writes down the sale's batch, whose outcome could not be
// learned, for its buyers' retries to resolve. Without a room there is no
// admission to keep to one unit, and nothing is written. When Redis does
// not take it, the units wait for the books sweep as before.
func (s *sale) rememberUnknown() {
	a := s.b.activity.ID
	if !s.hasRoom(s.b.activity) || len(s.placed) == 0 {
		return
	}
	ub := unknownBatch{Fence: s.g.Fence, Token: s.g.Token, Orders: make([]unknownItem, len(s.placed)), Remaining: &s.remaining}
	fields := make([]any, 0, 2*len(s.placed))
	name := unknownName(s.g)
	for k, o := range s.placed {
		ub.Orders[k] = unknownItem{ID: o.ID, UserID: o.UserID, Key: o.IdempotencyKey, Quantity: o.Quantity}
		fields = append(fields, strconv.FormatInt(o.UserID, 10), name)
	}
	body, err := json.Marshal(ub)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		users := s.unknownUsersKey(a)
		_, err = s.redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, s.unknownBatchKey(a, name), body, stock.ReceiptTTL)
			p.HSet(ctx, users, fields...)
			p.PExpire(ctx, users, stock.ReceiptTTL)
			return nil
		})
	}
	if err != nil {
		s.log.Warn("batch of unknown outcome not written down; a retry may take a second unit until the books sweep", "activity_id", a, "fence", s.g.Fence, "err", err)
	}
}

// resolveEarlier resolves, before an admitted buyer's purchase, a batch of
// the buyer's whose outcome was unknown (rememberUnknown). It returns nil
// when the buyer may go on: no such batch, or it was resolved (its units
// that no order holds given back; an order it wrote is then the holder's
// answer further on). Otherwise the error to answer, and the buyer takes no
// unit.
func (s *Service) resolveEarlier(ctx context.Context, a seckill.Activity, userID int64) error {
	users := s.unknownUsersKey(a.ID)
	name, err := s.redis.HGet(ctx, users, strconv.FormatInt(userID, 10)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		return seckill.Unavailable("Redis did not answer; nothing was sold", err)
	}
	body, err := s.redis.Get(ctx, s.unknownBatchKey(a.ID, name)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		// Expired with its receipt: the sweep has repaired the stock.
		s.redis.HDel(ctx, users, strconv.FormatInt(userID, 10))
		return nil
	case err != nil:
		return seckill.Unavailable("Redis did not answer; nothing was sold", err)
	}
	var ub unknownBatch
	if err := json.Unmarshal(body, &ub); err != nil {
		return seckill.Errorf(seckill.EInternal, "batch of unknown outcome %s unreadable: %v", name, err)
	}
	sl := ub.sale(ctx, s, a)
	sl.resolveCommit(fmt.Errorf("an earlier purchase's outcome was unknown: %w", errOutcomeUnknownEarlier))
	for k, o := range ub.Orders {
		if o.UserID == userID {
			if e, ok := errors.AsType[*seckill.Error](sl.b.outs[k].err); ok && e.Code == seckill.EOutcomeUnknown {
				return e // rememberUnknown wrote it down again
			}
		}
	}
	del := make([]string, len(ub.Orders))
	for k, o := range ub.Orders {
		del[k] = strconv.FormatInt(o.UserID, 10)
	}
	_, _ = s.redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.unknownBatchKey(a.ID, name))
		p.HDel(ctx, users, del...)
		return nil
	})
	return nil
}

// errOutcomeUnknownEarlier is the cause of a batch resolved again.
var errOutcomeUnknownEarlier = errors.New("purchase: earlier batch of unknown outcome")

// sale rebuilds the batch as a sale that resolveCommit can resolve: its
// grant, its orders, each its own buyer.
func (ub unknownBatch) sale(ctx context.Context, s *Service, a seckill.Activity) *sale {
	n := len(ub.Orders)
	sl := &sale{Service: s, b: &batch{activity: a, outs: make([]outcome, n)}, lease: ctx,
		g: stock.Grant{Fence: ub.Fence, Token: ub.Token}, approved: make([]int, n), placed: make([]seckill.Order, n)}
	// Without the deduct's remaining the excess Redis had over the database
	// is not known: every unit of an order the database refused stays
	// deducted, for the books sweep to repair.
	sl.remaining = math.MaxInt64 / 2
	if ub.Remaining != nil {
		sl.remaining = *ub.Remaining
	}
	for k, o := range ub.Orders {
		sl.approved[k] = k
		sl.placed[k] = seckill.Order{ID: o.ID, ActivityID: a.ID, UserID: o.UserID, IdempotencyKey: o.Key, Quantity: o.Quantity, Fence: ub.Fence}
	}
	return sl
}
