package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
)

// A room's notes (note.lua) as the instances holding requests read them.

// note is one note of a room: the users a step admitted, or the reason
// the room closed.
type note struct {
	id     string // the stream entry's id
	n      int64  // the room's note number
	users  []int64
	closed string
}

// notesRead is one read of a room's notes: the room's note count (its
// field "notes", 0 without one) and the notes after a cursor, or, read
// from no cursor, the id of the last note ("0-0" when there is none).
type notesRead struct {
	count int64
	last  string
	notes []note
}

// notesBatch is the most notes one read returns.
const notesBatch = 256

// noNote is the cursor before every note of a stream.
const noNote = "0-0"

// readNotes reads, in one transaction so the count and the notes agree,
// the room's note count and the notes after the cursor (at most
// notesBatch), or with cursor "" only the last note's id.
func (s *Store) readNotes(ctx context.Context, activityID int64, cursor string) (notesRead, error) {
	stream := s.space.WaitingNotes(activityID)
	pipe := s.rdb.TxPipeline()
	count := pipe.HGet(ctx, s.room(activityID), keys.RoomNotes)
	var msgs *redis.XMessageSliceCmd
	if cursor == "" {
		msgs = pipe.XRevRangeN(ctx, stream, "+", "-", 1)
	} else {
		msgs = pipe.XRangeN(ctx, stream, "("+cursor, "+", notesBatch)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return notesRead{}, fmt.Errorf("waitingroom: notes of activity %d: %w", activityID, err)
	}
	out := notesRead{last: noNote}
	out.count, _ = strconv.ParseInt(count.Val(), 10, 64)
	for _, m := range msgs.Val() {
		out.last = m.ID
		if cursor != "" {
			out.notes = append(out.notes, parseNote(m))
		}
	}
	return out, nil
}

// parseNote reads one stream entry of note.lua's; a malformed one has n 0,
// which the reader takes for a missed note.
func parseNote(m redis.XMessage) note {
	nt := note{id: m.ID}
	v, _ := m.Values["n"].(string)
	nt.n, _ = strconv.ParseInt(v, 10, 64)
	if c, ok := m.Values["c"].(string); ok {
		nt.closed = c
	}
	if a, ok := m.Values["a"].(string); ok {
		for u := range strings.SplitSeq(a, ",") {
			if id, err := strconv.ParseInt(u, 10, 64); err == nil {
				nt.users = append(nt.users, id)
			}
		}
	}
	return nt
}
