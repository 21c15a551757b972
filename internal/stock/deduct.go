package stock

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DeductEach takes, for the lock grant, each buyer's units in one atomic
// step: buyers[i] gets all of units[i] (at least 1) or none. In turn, a
// buyer whose units are all still left takes them; one who asks for more
// than is left takes nothing and leaves them to a smaller ask behind it.
// served are the indexes of the buyers who got their units, in order, and
// taken their units; remaining is how many are left. The buyers served join
// the activity's buyer set (Holders) in the same atomic step.
//
// With no unit taken it returns ErrSoldOut, with remaining, which may be
// above 0 when every buyer asked for more than was left; with the stock not
// loaded, ErrNotLoaded; in both cases nothing changed. On any other error
// the deduct may or may not have happened: Settle(fence, 0) puts its units
// back if it did. A grant deducts once: a repeated DeductEach for the same
// grant (a retry after a lost reply) takes nothing more and reports what the
// grant holds.
func (s *Store) DeductEach(ctx context.Context, activityID int64, g Grant, buyers, units []int64) (served []int, taken, remaining int64, err error) {
	if len(buyers) == 0 || len(units) != len(buyers) {
		return nil, 0, 0, fmt.Errorf("stock: deduct activity %d for %d buyers with %d quantities: want one quantity a buyer", activityID, len(buyers), len(units))
	}
	var n int64
	for _, u := range units {
		if u < 1 {
			return nil, 0, 0, fmt.Errorf("stock: deduct activity %d: a buyer asks for %d units, want at least 1", activityID, u)
		}
		n += u
	}
	taken, remaining, served, err = s.deduct(ctx, activityID, g, n, buyers, units)
	return served, taken, remaining, err
}

// deduct runs deduct.lua for the buyers with their units, n in all, and
// reads its reply.
func (s *Store) deduct(ctx context.Context, activityID int64, g Grant, n int64, buyers, units []int64) (taken, remaining int64, served []int, err error) {
	fence := g.Fence
	args := make([]any, 0, 3+2*len(buyers))
	args = append(args, n, ReceiptTTL.Milliseconds(), len(buyers))
	for _, b := range buyers {
		args = append(args, b)
	}
	for _, u := range units {
		args = append(args, u)
	}
	ks := append(s.keys(activityID, g), s.buyers(activityID),
		s.space.WaitingRoom(activityID), s.space.WaitingAdmitted(activityID), s.space.WaitingDeducts(activityID))
	reply, err := deductScript.Run(ctx, s.rdb, ks, args...).Result()
	if refused, ok := notAdmitted(reply); ok {
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, refused)
	}
	if refused, ok := inFlight(reply); ok {
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, refused)
	}
	if err == nil {
		if stopped := stoppedErr(reply); stopped != nil {
			return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, stopped)
		}
	}
	switch {
	case errors.Is(err, redis.Nil):
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, err)
	case reply == int64(settled):
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d for fence %d: %w", activityID, fence, ErrReturned)
	}
	taken, left, served, ok := servedReply(reply, len(buyers), units)
	switch {
	case !ok:
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d: unexpected reply %v", activityID, reply)
	case taken < 0 || taken > n:
		// Not this deduct's count: a caller indexes its buyers with it.
		return 0, 0, nil, fmt.Errorf("stock: deduct activity %d for fence %d: %w: took %d of %d", activityID, fence, ErrBadReceipt, taken, n)
	case taken == 0:
		return 0, max(left, 0), nil, fmt.Errorf("stock: deduct activity %d: %w", activityID, ErrSoldOut)
	}
	return taken, left, served, nil
}

// servedReply reads deduct.lua's {taken, remaining[, i, ...]} reply for
// buyers asking for units: the buyers served are the places listed, or the
// first taken when none is. ok is false for a reply that does not add up
// (a place out of range, units that do not make taken).
func servedReply(reply any, buyers int, units []int64) (taken, left int64, served []int, ok bool) {
	r, isSlice := reply.([]any)
	if !isSlice || len(r) < 2 {
		return 0, 0, nil, false
	}
	taken, ok1 := r[0].(int64)
	left, ok2 := r[1].(int64)
	if !ok1 || !ok2 {
		return 0, 0, nil, false
	}
	if taken <= 0 {
		return taken, left, nil, len(r) == 2
	}
	var sum int64
	if len(r) == 2 {
		if taken > int64(buyers) {
			return 0, 0, nil, false
		}
		served = make([]int, taken)
		for i := range served {
			served[i] = i
			sum += units[i]
		}
		return taken, left, served, sum == taken
	}
	served = make([]int, 0, len(r)-2)
	for _, v := range r[2:] {
		i, isInt := v.(int64)
		if !isInt || i < 1 || i > int64(buyers) {
			return 0, 0, nil, false
		}
		served = append(served, int(i)-1)
		sum += units[i-1]
	}
	return taken, left, served, sum == taken
}

// notAdmitted reads deduct.lua's {-4, i, ...} reply: the buyers the
// activity's waiting room has not admitted.
func notAdmitted(reply any) (*NotAdmittedError, bool) {
	buyers, ok := refusals(reply, refusedNotAdmitted)
	if !ok {
		return nil, false
	}
	return &NotAdmittedError{Buyers: buyers}, true
}

// refusals reads deduct.lua's {code, i, ...} reply of buyers it refused
// (1-based places) into 0-based indexes; ok is false for any other reply.
func refusals(reply any, code int64) (buyers []int, ok bool) {
	r, isSlice := reply.([]any)
	if !isSlice || len(r) < 2 || r[0] != code {
		return nil, false
	}
	buyers = make([]int, 0, len(r)-1)
	for _, v := range r[1:] {
		i, _ := v.(int64)
		buyers = append(buyers, int(i)-1)
	}
	return buyers, true
}

// inFlight reads deduct.lua's {-7, i, ...} reply: the buyers whose units
// another grant still holds.
func inFlight(reply any) (*InFlightError, bool) {
	buyers, ok := refusals(reply, refusedInFlight)
	if !ok {
		return nil, false
	}
	return &InFlightError{Buyers: buyers}, true
}

// InFlightError is DeductEach's refusal, in an activity with a waiting room,
// of buyers whose units another grant still holds: the same admitted buyer
// buying on another instance at the same time. Nothing was taken.
type InFlightError struct {
	Buyers []int // 0-based indexes into DeductEach's buyers
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("%v: %d of the buyers", ErrInFlight, len(e.Buyers))
}

func (e *InFlightError) Unwrap() error { return ErrInFlight }

// ErrInFlight: the buyer's purchase is being made by another grant.
var ErrInFlight = errors.New("stock: the buyer's units are held by another purchase in flight")

// pair reads a script's {a, b} reply of two integers.
func pair(reply any) (a, b int64, ok bool) {
	r, isSlice := reply.([]any)
	if !isSlice || len(r) != 2 {
		return 0, 0, false
	}
	a, ok1 := r[0].(int64)
	b, ok2 := r[1].(int64)
	return a, b, ok1 && ok2
}

// NotAdmittedError is DeductEach's refusal of buyers the activity's waiting
// room has not admitted (their admission lapsed, or they never had one).
type NotAdmittedError struct {
	Buyers []int // 0-based indexes into DeductEach's buyers
}

func (e *NotAdmittedError) Error() string {
	return fmt.Sprintf("%v: %d of the buyers", ErrNotAdmitted, len(e.Buyers))
}

func (e *NotAdmittedError) Unwrap() error { return ErrNotAdmitted }
