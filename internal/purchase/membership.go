package purchase

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill/internal/stock"
)

// The sold-out storm asks, for each answer, whether the buyer holds an order
// (precedence, holders.go): one Redis round trip each would halve the storm's
// answers a second. So the single questions go through one goroutine that
// drains every question asked while its last round trip was out into one
// pipeline (group commit, as Badger writes), and each question carries its
// own reply.

// maxMembershipBatch caps the questions of one round trip.
const maxMembershipBatch = 1024

type membershipQuestion struct {
	activityID, userID int64
	reply              chan membershipAnswer // buffered: the asker may have gone
}

type membershipAnswer struct {
	in  bool
	err error
}

var errClosed = errors.New("purchase: service closed")

// buyerSet asks the activities' buyer sets in Redis, a single question in
// a round trip shared with the others asked meanwhile.
type buyerSet struct {
	stock     *stock.Store
	questions chan membershipQuestion
	stop      <-chan struct{} // closed: run returns, questions are refused
}

func newBuyerSet(st *stock.Store, stop <-chan struct{}) *buyerSet {
	return &buyerSet{stock: st, questions: make(chan membershipQuestion, maxMembershipBatch), stop: stop}
}

// in reports which of the users are in the activity's buyer set: a whole
// batch's in one SMISMEMBER, a single buyer's through the shared round
// trips of run.
func (s *buyerSet) in(ctx context.Context, activityID int64, users []int64) (map[int64]bool, error) {
	if len(users) != 1 {
		return s.stock.Holders(ctx, activityID, users)
	}
	q := membershipQuestion{activityID: activityID, userID: users[0], reply: make(chan membershipAnswer, 1)}
	select {
	case s.questions <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.stop:
		return nil, errClosed
	}
	select {
	case a := <-q.reply:
		return map[int64]bool{users[0]: a.in}, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run is the goroutine behind in's single questions; it returns when stop
// is closed.
func (s *buyerSet) run() {
	for {
		select {
		case <-s.stop:
			return
		case first := <-s.questions:
			batch := []membershipQuestion{first}
		drain:
			for len(batch) < maxMembershipBatch {
				select {
				case q := <-s.questions:
					batch = append(batch, q)
				default:
					break drain
				}
			}
			s.answer(batch)
		}
	}
}

// answer asks Redis the questions in one round trip and replies to each.
func (s *buyerSet) answer(batch []membershipQuestion) {
	users := make(map[int64][]int64)
	for _, q := range batch {
		users[q.activityID] = append(users[q.activityID], q.userID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	in, err := s.stock.HoldersIn(ctx, users)
	for _, q := range batch {
		q.reply <- membershipAnswer{in: in[q.activityID][q.userID], err: err}
	}
}
