package waitingroom

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
	args := make([]any, 0, 1+3*len(calls))
	args = append(args, Retention.Milliseconds())
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
		answer, rest, _ := strings.Cut(str(v), ",")
		st, ok := parseStanding(rest)
		if !ok {
			return nil, fmt.Errorf("unexpected join reply %v", v)
		}
		out = append(out, joinReply{answer: answer, st: st})
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
	pausedAt                  int64   // since when, unix ms
}

func (st standing) hasPlace() bool { return st.rank >= 0 || st.until >= 0 || st.end != "" }

// pausedPlace reports whether the sale is paused for a user with a place
// that is not used up by an order: a join answers paused, as to anyone
// without a place (docs/API.md "Stopping a sale").
func (st standing) pausedPlace() bool { return st.paused && !strings.HasPrefix(st.end, "d:") }

// heldByPause reports whether the user's admission was open when ops
// paused the sale: it keeps its time, and the resume moves its end later
// by the pause's length (internal/stock/resume.lua).
func (st standing) heldByPause() bool { return st.paused && st.until > st.pausedAt }

// lapsedOnly reports whether the user's only place is a lapsed admission.
func (st standing) lapsedOnly() bool { return st.end == "l" && st.rank < 0 && st.until < 0 }

// standing reads the user's standing in the activity's room, batched with
// the other reads of the room.
func (s *Store) standing(ctx context.Context, activityID, userID int64) (standing, error) {
	return s.readStanding(ctx, activityID, userID, false)
}

// readStanding is standing; first puts the read ahead of the room's
// ordinary reads waiting.
func (s *Store) readStanding(ctx context.Context, activityID, userID int64, first bool) (standing, error) {
	do := s.reads.do
	if first {
		do = s.reads.doFirst
	}
	st, err := do(ctx, activityID, userID)
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
		st, ok := parseStanding(str(v))
		if !ok {
			return nil, fmt.Errorf("unexpected status reply %v", v)
		}
		out = append(out, st)
	}
	return out, nil
}

// standingFields is the count of standing.lua's fields.
const standingFields = 17

// parseStanding reads standing.lua's reply: its fields joined by commas,
// the last (the user's end) as it is; false when it is not one.
func parseStanding(reply string) (standing, bool) {
	var f [standingFields]string
	for i := range standingFields - 1 {
		var ok bool
		if f[i], reply, ok = strings.Cut(reply, ","); !ok {
			return standing{}, false
		}
	}
	f[standingFields-1] = reply
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	ms := func(i int) time.Time { return time.UnixMilli(n(i)).UTC() }
	st := standing{
		on: f[0] == "1", lost: f[0] == "", now: ms(1), opens: ms(2), starts: ms(3), ends: ms(4), closed: f[5],
		rank: n(6), until: n(7), buyer: n(8) == 1, waiting: n(9), admitted: n(10), remain: n(12),
		hold: max(n(14), 1), paused: n(15) > 0, pausedAt: n(15), end: f[16],
	}
	st.rate, _ = strconv.ParseFloat(f[11], 64)
	st.pace, _ = strconv.ParseFloat(f[13], 64)
	return st, true
}
