package purchase

import (
	"context"

	"github.com/seckill-oss/seckill"
)

// writesInFlight answers, for an activity with a waiting room, the buyers
// in whose earlier purchase may still be being written: those in the buyer
// set (a deduct took a unit for them) with no order row yet. A plain read
// cannot tell "its unit went back" from "its COMMIT is in flight" (held past
// its lease, and the buyer asked again elsewhere), and in the second case a
// deduct now would give one admission two units, the room having counted
// one: another admitted buyer could hear sold_out until the held
// transaction ended. So they are read again with the locking read, which
// waits for that transaction: a holder is answered as answer does, a buyer
// still without an order goes on, and one the read could not answer within
// lookupTimeout is told 503 and takes no unit. The others go on.
func (h *holders) writesInFlight(b *batch, in []int) ([]int, []answer) {
	if len(in) == 0 {
		return in, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	members, err := h.buyers.in(ctx, b.activity.ID, b.users(in))
	if err != nil {
		// As held: the deduct still checks the admission.
		h.log.Warn("buyer set not read; buyers go on without waiting for their writes in flight", "activity_id", b.activity.ID, "err", err)
		return in, nil
	}
	var users []int64
	for _, i := range in {
		if u := b.req(i).UserID; members[u] {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		return in, nil
	}
	held, err := h.orders.Orders.OrdersByUsersLocked(ctx, b.activity.ID, users)
	left := in[:0:0]
	var said []answer
	for _, i := range in {
		req := b.req(i)
		o, ok := held[req.UserID]
		switch {
		case !members[req.UserID]:
			left = append(left, i)
		case err != nil:
			said = append(said, answer{i, outcome{err: seckill.Unavailable("an earlier purchase of this user may still be being written; nothing was sold by this request", err)}})
		case !ok:
			left = append(left, i)
		default:
			h.bought.remember(o)
			o, err := req.AnswerHolder(o)
			said = append(said, answer{i, outcome{o, err}})
		}
	}
	return left, said
}
