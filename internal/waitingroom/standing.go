package waitingroom

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// A user's standing and join, each batched with the other calls of the
// room (batch.go): status.lua and join.lua, both after standing.lua.

// joinCall is one user's join in a line of at most maxPlaces places not
// yet admitted; holderAsked says the caller asked whether the user holds
// an order (otherwise a user in the buyer set gets no place: "buyer").
type joinCall struct {
	user, maxPlaces int64
	holderAsked     bool
}

// joinReply is join.lua's answer for one user and their standing after it.
type joinReply struct {
	answer string
	st     standing
}

// join runs join.lua for the user, in a line of at most maxPlaces places
// not yet admitted, batched with the other joins of the room, and returns
// its answer and the user's standing after it. Without holderAsked, a user
// in the buyer set is answered "buyer" and given no place.
func (s *Store) join(ctx context.Context, activityID, userID, maxPlaces int64, holderAsked bool) (string, standing, error) {
	r, err := s.joins.do(ctx, activityID, joinCall{user: userID, maxPlaces: maxPlaces, holderAsked: holderAsked})
	if err != nil {
		return "", standing{}, fmt.Errorf("waitingroom: join activity %d: %w", activityID, err)
	}
	return r.answer, r.st, nil
}

// joinBatch runs join.lua once for the users of one room.
func (s *Store) joinBatch(ctx context.Context, activityID int64, calls []joinCall) ([]joinReply, error) {
	args := make([]any, 0, 3*len(calls))
	for _, c := range calls {
		asked := 0
		if c.holderAsked {
			asked = 1
		}
		args = append(args, c.user, c.maxPlaces, asked)
	}
	res, err := s.replicated(ctx, activityID, joinScript, s.standingKeys(activityID), args...)
	if err != nil {
		return nil, err
	}
	replies, _ := res.([]any)
	out := make([]joinReply, 0, len(replies))
	for _, v := range replies {
		r, _ := v.([]any)
		if len(r) != 1+standingFields {
			return nil, fmt.Errorf("unexpected join reply %v", v)
		}
		out = append(out, joinReply{answer: str(r[0]), st: parseStanding(r[1:])})
	}
	return out, nil
}

// standing is one user's place in a room as status.lua reads it.
type standing struct {
	on                        bool
	lost                      bool // Redis has no room at all
	now                       time.Time
	opens, starts, ends       time.Time
	closed                    string
	rank                      int64 // -1: not in the line
	until                     int64 // unix ms; -1: no open admission
	end                       string
	buyer                     bool
	waiting, admitted, remain int64   // remain -1: stock not loaded
	hold                      int64   // units one admission holds
	rate                      float64 // measured admissions a second
	pace                      float64 // admissions a second the last step allowed
	paused                    bool    // ops paused the sale
}

func (st standing) hasPlace() bool { return st.rank >= 0 || st.until >= 0 || st.end != "" }

// lapsedOnly reports whether the user's only place is a lapsed admission.
func (st standing) lapsedOnly() bool { return st.end == "l" && st.rank < 0 && st.until < 0 }

// standing reads the user's standing in the activity's room, batched with
// the other reads of the room.
func (s *Store) standing(ctx context.Context, activityID, userID int64) (standing, error) {
	st, err := s.reads.do(ctx, activityID, userID)
	if err != nil {
		return standing{}, fmt.Errorf("waitingroom: status in activity %d: %w", activityID, err)
	}
	return st, nil
}

// standingBatch runs status.lua once for the users of one room.
func (s *Store) standingBatch(ctx context.Context, activityID int64, users []int64) ([]standing, error) {
	args := make([]any, len(users))
	for i, u := range users {
		args[i] = u
	}
	replies, err := statusScript.Run(ctx, s.rdb, s.standingKeys(activityID), args...).Slice()
	if err != nil {
		return nil, err
	}
	out := make([]standing, 0, len(replies))
	for _, v := range replies {
		r, _ := v.([]any)
		if len(r) != standingFields {
			return nil, fmt.Errorf("unexpected status reply %v", v)
		}
		out = append(out, parseStanding(r))
	}
	return out, nil
}

// standingFields is the length of standing.lua's reply.
const standingFields = 17

// parseStanding reads standing.lua's reply of standingFields fields.
func parseStanding(r []any) standing {
	ms := func(v any) time.Time { return time.UnixMilli(num(v)).UTC() }
	st := standing{
		on: str(r[0]) == "1", lost: str(r[0]) == "", now: ms(r[1]), opens: ms(r[2]), starts: ms(r[3]), ends: ms(r[4]),
		closed: str(r[5]), rank: num(r[6]), until: num(r[7]), end: str(r[8]), buyer: num(r[9]) == 1,
		waiting: num(r[10]), admitted: num(r[11]), remain: num(r[13]), paused: num(r[16]) == 1,
	}
	st.rate, _ = strconv.ParseFloat(str(r[12]), 64)
	st.pace, _ = strconv.ParseFloat(str(r[14]), 64)
	st.hold = max(num(r[15]), 1)
	return st
}
