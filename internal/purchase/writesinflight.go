package purchase

import (
	"context"

	"github.com/seckill-oss/seckill"
)

// awaitWritesInFlight answers, for an activity with a waiting room, the
// pending buyers whose earlier purchase may still be being written: those
// in the buyer set (a deduct took a unit for them) with no order row yet.
// A plain read cannot tell "its unit went back" from "its COMMIT is in
// flight" (held past its lease, and the buyer asked again elsewhere), and in
// the second case a deduct now would give one admission two units, the room
// having counted one: another admitted buyer could hear sold_out until the
// held transaction ended. So they are read again with the locking read,
// which waits for that transaction: a holder is answered as answerHolders
// does, a buyer still without an order goes on, and one the read could not
// answer within lookupTimeout is told 503 and takes no unit. It returns the
// pending buyers left.
func (s *sale) awaitWritesInFlight(pending []int) []int {
	b := s.b
	if len(pending) == 0 || !s.hasRoom(b.activity) {
		return pending
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	in, err := s.buyers.in(ctx, b.activity.ID, b.users(pending))
	if err != nil {
		return pending // as heldOrders: the deduct still checks the admission
	}
	var members []int64
	for _, i := range pending {
		if u := b.req(i).UserID; in[u] {
			members = append(members, u)
		}
	}
	if len(members) == 0 {
		return pending
	}
	held, err := s.orders.Orders.OrdersByUsersLocked(ctx, b.activity.ID, members)
	left := pending[:0:0]
	for _, i := range pending {
		req := b.req(i)
		o, ok := held[req.UserID]
		switch {
		case !in[req.UserID]:
			left = append(left, i)
		case err != nil:
			b.outs[i].err = seckill.Unavailable("an earlier purchase of this user may still be being written; nothing was sold by this request", err)
		case !ok:
			left = append(left, i)
		case o.IdempotencyKey != "" && o.IdempotencyKey == req.IdempotencyKey:
			s.bought.remember(o)
			b.outs[i].order = o
		default:
			s.bought.remember(o)
			b.outs[i].err = seckill.Holds(o)
		}
	}
	return left
}
