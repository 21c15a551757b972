package waitingroom

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
	"github.com/seckill-oss/seckill/internal/stock"
)

// luaFiles holds the room's scripts, one job and one .lua file each (the
// file says what and why).
//
//go:embed *.lua
var luaFiles embed.FS

var (
	// joinScript gives users one place each in the line, or tells why not,
	// and reads their standings after.
	joinScript = luascript.LoadWithPrelude(luaFiles, "standing.lua", "join.lua")
	// statusScript reads users' standings, without writing.
	statusScript = luascript.LoadWithPrelude(luaFiles, "standing.lua", "status.lua")
	// admitScript lapses admissions that ran out and admits the next places, as many as the units left.
	admitScript = luascript.LoadWithPrelude(luaFiles, "note.lua", "admit.lua")
	// finishScript uses admissions up with their buyers' final answers.
	finishScript = luascript.LoadWithPrelude(luaFiles, "finish.lua")
	// closeScript closes a room as sold out, if it still is.
	closeScript = luascript.LoadWithPrelude(luaFiles, "note.lua", "close.lua")
	// seenScript records that an admitted buyer was seen now.
	seenScript = luascript.LoadWithPrelude(luaFiles, "seen.lua")
	// dueScript records when a user in line was told to come back.
	dueScript = luascript.LoadWithPrelude(luaFiles, "due.lua")
)

// ErrNotReplicated is returned when fewer Redis replicas than asked
// acknowledged a write of the room within the timeout; the write may be lost
// in a failover.
var ErrNotReplicated = errors.New("waitingroom: write not acknowledged by enough replicas")

// errShortReply is a batched script's reply that holds fewer answers than
// the batch's users.
var errShortReply = errors.New("waitingroom: a script answered fewer users than it was given")

// Join's answers that are not a new place.
const (
	joined   = "joined"
	have     = "have"
	noRoom   = "none"
	notOpen  = "not_open"
	isEnded  = "ended"
	isClosed = "closed"
	isFull   = "full"
	isPaused = "paused"
	isBuyer  = "buyer"
)

// Retention is how long a room's keys stay in Redis after its sale ends
// (docs/API.md "Waiting room limits").
const Retention = 24 * time.Hour

// Store keeps activities' waiting rooms in Redis. Each room's keys share the
// activity's hash tag, so every script runs on one node of a cluster. It is
// safe for concurrent use by any number of processes sharing the Redis.
type Store struct {
	rdb   redis.UniversalClient
	space keys.Space
	// replicas, when above 0: each write of a place or an admission waits
	// for that many replicas, within waitTimeout, so a failover keeps it.
	replicas    int
	waitTimeout time.Duration

	// joins and reads batch the joins and the standing reads of each room
	// (batch.go).
	joins *batcher[joinCall, joinReply]
	reads *batcher[int64, standing]
}

// NewStore returns a Store on rdb naming its keys in space.
func NewStore(rdb redis.UniversalClient, space keys.Space, replicas int, waitTimeout time.Duration) *Store {
	s := &Store{rdb: rdb, space: space, replicas: replicas, waitTimeout: waitTimeout}
	s.joins = newBatcher(joinLanes, s.joinBatch)
	s.reads = newBatcher(readLanes, s.standingBatch)
	return s
}

// Window is what a room needs of its activity.
type Window struct {
	OpensAt, StartsAt, EndsAt time.Time
	Seed                      string
	// Hold is the units one admission holds: the activity's per-user
	// limit (docs/API.md "Quantity per buyer"); 0 means 1.
	Hold int64
}

// Open turns the activity's room on with its window, keeping its line and
// counters: opening again (another instance, a rebuild after Redis lost the
// room) changes nothing else.
func (s *Store) Open(ctx context.Context, activityID int64, w Window) error {
	room := s.room(activityID)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, room, keys.RoomOn, 1, keys.RoomOpens, w.OpensAt.UnixMilli(), keys.RoomStarts, w.StartsAt.UnixMilli(),
		keys.RoomEnds, w.EndsAt.UnixMilli(), keys.RoomSeed, w.Seed, keys.RoomHold, max(w.Hold, 1))
	pipe.PExpireAt(ctx, room, w.EndsAt.Add(Retention))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("waitingroom: open room of activity %d: %w", activityID, err)
	}
	rooms := s.space.WaitingRooms()
	pipe = s.rdb.Pipeline()
	pipe.ZAdd(ctx, rooms, redis.Z{Score: float64(w.EndsAt.UnixMilli()), Member: activityID})
	// The list forgets rooms whose keys have expired.
	pipe.ZRemRangeByScore(ctx, rooms, "-inf", "("+strconv.FormatInt(time.Now().Add(-Retention).UnixMilli(), 10))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("waitingroom: list room of activity %d: %w", activityID, err)
	}
	return nil
}

// Shut turns the activity's room off; places and admissions stay readable.
func (s *Store) Shut(ctx context.Context, activityID int64) error {
	if err := s.rdb.HSet(ctx, s.room(activityID), keys.RoomOn, 0).Err(); err != nil {
		return fmt.Errorf("waitingroom: shut room of activity %d: %w", activityID, err)
	}
	return nil
}

// step is one admit.lua run.
type step struct {
	admitted, lapsed, remaining, open, waiting int64
	closed                                     string
	total                                      int64   // admissions the room ever gave
	rate                                       float64 // measured admissions a second
}

// Pace bounds how fast a room admits.
type Pace struct {
	MinRate, MaxRate float64       // admissions a second
	TTL              time.Duration // an admission's lifetime
	// Idle lapses an admission whose buyer was not seen for this long (a
	// poll, a purchase); 0: an admission lasts its TTL.
	Idle time.Duration
}

// maxStep bounds the admissions, and the lapses, of one step: one script
// must not hold Redis for long.
const maxStep = 2000

// admit runs one step of the activity's room.
func (s *Store) admit(ctx context.Context, activityID int64, p Pace) (step, error) {
	res, err := s.replicated(ctx, activityID, admitScript, s.stepKeys(activityID), p.MinRate, p.MaxRate, p.TTL.Milliseconds(), maxStep, p.Idle.Milliseconds(),
		Retention.Milliseconds())
	if err != nil {
		return step{}, fmt.Errorf("waitingroom: admit in activity %d: %w", activityID, err)
	}
	r, _ := res.([]any)
	if len(r) != 8 {
		return step{}, fmt.Errorf("waitingroom: admit in activity %d: unexpected reply %v", activityID, res)
	}
	out := step{admitted: num(r[0]), lapsed: num(r[1]), remaining: num(r[2]), open: num(r[3]), waiting: num(r[4]),
		closed: str(r[5]), total: num(r[6])}
	out.rate, _ = strconv.ParseFloat(str(r[7]), 64)
	return out, nil
}

// closeSoldOut closes the room as sold out if no unit is left and no
// admission is open; the caller knows no unit can come back.
func (s *Store) closeSoldOut(ctx context.Context, activityID int64) (bool, error) {
	n, err := closeScript.Run(ctx, s.rdb, s.stepKeys(activityID), Retention.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("waitingroom: close activity %d: %w", activityID, err)
	}
	return n == 1, nil
}

// finish uses up admissions with their buyers' final answers: ends maps a
// user to "d:<order id>" or "c:<reason>".
func (s *Store) finish(ctx context.Context, activityID int64, ends map[int64]string) error {
	if len(ends) == 0 {
		return nil
	}
	args := make([]any, 0, 1+2*len(ends))
	args = append(args, Retention.Milliseconds())
	for user, end := range ends {
		args = append(args, user, end)
	}
	if _, err := s.replicated(ctx, activityID, finishScript, s.userKeys(activityID), args...); err != nil {
		return fmt.Errorf("waitingroom: finish admissions in activity %d: %w", activityID, err)
	}
	return nil
}

// admittedUntil returns the end of the user's open admission (zero: none)
// and whether the room is on; seckill.ErrRoomLost when Redis has no room of
// the activity at all (neither on nor turned off).
func (s *Store) admittedUntil(ctx context.Context, activityID, userID int64) (until time.Time, on bool, err error) {
	pipe := s.rdb.Pipeline()
	onCmd := pipe.HGet(ctx, s.room(activityID), keys.RoomOn)
	untilCmd := pipe.ZScore(ctx, s.space.WaitingAdmitted(activityID), strconv.FormatInt(userID, 10))
	stopCmd := pipe.HMGet(ctx, s.space.Stock(activityID), keys.StockPaused, keys.StockEnded)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return time.Time{}, false, fmt.Errorf("waitingroom: admission in activity %d: %w", activityID, err)
	}
	if ms, err := untilCmd.Result(); err == nil {
		until = time.UnixMilli(int64(ms)).UTC()
	}
	// The sale's stop comes before the admission (docs/API.md, the
	// precedence of refusals), and the stock hash's flags are what every
	// instance's deduct obeys: read fresh, never from a mark.
	if stop := stopCmd.Val(); len(stop) == 2 {
		switch {
		case stop[1] != nil:
			return until, true, stock.ErrEnded
		case stop[0] != nil:
			return until, true, stock.ErrPaused
		}
	}
	if errors.Is(onCmd.Err(), redis.Nil) {
		return until, false, seckill.ErrRoomLost
	}
	return until, onCmd.Val() == "1", nil
}

// seen records that the admitted user was seen now (a poll, a purchase),
// for the idle lapse (seen.lua).
func (s *Store) seen(ctx context.Context, activityID, userID int64, busy time.Duration) error {
	err := seenScript.Run(ctx, s.rdb, []string{s.space.WaitingSeen(activityID)}, userID, busy.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("waitingroom: seen in activity %d: %w", activityID, err)
	}
	return nil
}

// due records that the user in line was told to come back in refresh
// (due.lua), for the idle lapse of the admission they may get meanwhile.
func (s *Store) due(ctx context.Context, activityID, userID int64, refresh time.Duration) error {
	ks := []string{s.room(activityID), s.space.WaitingDue(activityID)}
	if err := dueScript.Run(ctx, s.rdb, ks, userID, refresh.Milliseconds(), Retention.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("waitingroom: due in activity %d: %w", activityID, err)
	}
	return nil
}

// lost reports whether Redis has no room of the activity at all.
func (s *Store) lost(ctx context.Context, activityID int64) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.room(activityID)).Result()
	if err != nil {
		return false, fmt.Errorf("waitingroom: room of activity %d: %w", activityID, err)
	}
	return n == 0, nil
}

// counts reads the sizes of the activity's room: the places not yet
// admitted (none once the room is closed: its places are closed, not
// waiting) and the admissions open.
func (s *Store) counts(ctx context.Context, activityID int64) (waiting, admitted int64, err error) {
	pipe := s.rdb.Pipeline()
	closed := pipe.HGet(ctx, s.room(activityID), keys.RoomClosed)
	line := pipe.ZCard(ctx, s.space.WaitingLine(activityID))
	open := pipe.ZCard(ctx, s.space.WaitingAdmitted(activityID))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, fmt.Errorf("waitingroom: counts of activity %d: %w", activityID, err)
	}
	if closed.Val() != "" {
		return 0, open.Val(), nil
	}
	return line.Val(), open.Val(), nil
}

// roomState is what the admitter needs to know of a listed room.
type roomState struct {
	on     bool
	closed string
}

// rooms lists the rooms of activities that ended less than grace ago, with
// whether each is on and closed.
func (s *Store) rooms(ctx context.Context, now time.Time, grace time.Duration) (map[int64]roomState, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, s.space.WaitingRooms(), &redis.ZRangeBy{
		Min: strconv.FormatInt(now.Add(-grace).UnixMilli(), 10), Max: "+inf",
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("waitingroom: list rooms: %w", err)
	}
	out := make(map[int64]roomState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// One read per room, not one pipeline: on a cluster the rooms live on
	// several nodes, and go-redis splits a pipeline by node itself.
	pipe := s.rdb.Pipeline()
	cmds := make(map[int64]*redis.SliceCmd, len(ids))
	for _, v := range ids {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			continue
		}
		cmds[id] = pipe.HMGet(ctx, s.room(id), keys.RoomOn, keys.RoomClosed)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("waitingroom: read rooms: %w", err)
	}
	for id, c := range cmds {
		v := c.Val()
		if len(v) == 2 {
			out[id] = roomState{on: str(v[0]) == "1", closed: str(v[1])}
		}
	}
	return out, nil
}

// replicated runs script and, when replicas are asked for, WAITs for them on
// the same connection (WAIT covers that connection's writes only), on the
// primary of the activity's slot.
func (s *Store) replicated(ctx context.Context, activityID int64, script *redis.Script, ks []string, args ...any) (any, error) {
	if s.replicas <= 0 {
		return script.Run(ctx, s.rdb, ks, args...).Result()
	}
	var node redis.Cmdable = s.rdb
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		primary, err := cc.MasterForKey(ctx, ks[0])
		if err != nil {
			return nil, err
		}
		node = primary.WithTimeout(primary.Options().ReadTimeout + s.waitTimeout)
	}
	if c, ok := s.rdb.(*redis.Client); ok {
		node = c.WithTimeout(c.Options().ReadTimeout + s.waitTimeout)
	}
	// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
	pipe := node.Pipeline()
	res := script.Eval(ctx, pipe, ks, args...)
	acked := pipe.Do(ctx, "WAIT", s.replicas, s.waitTimeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	if n, err := acked.Int64(); err != nil || n < int64(s.replicas) {
		return res.Val(), fmt.Errorf("%w: %d of %d", ErrNotReplicated, n, s.replicas)
	}
	return res.Val(), nil
}

func (s *Store) room(activityID int64) string { return s.space.WaitingRoom(activityID) }

func (s *Store) buyers(activityID int64) string { return s.space.Buyers(activityID) }

// userKeys are the room's hash, line, admissions and ends.
func (s *Store) userKeys(activityID int64) []string {
	return []string{s.room(activityID), s.space.WaitingLine(activityID),
		s.space.WaitingAdmitted(activityID), s.space.WaitingEnds(activityID)}
}

// stepKeys are admit.lua's and close.lua's KEYS: userKeys, the stock hash,
// the seen and due times and the notes.
func (s *Store) stepKeys(activityID int64) []string {
	return append(s.userKeys(activityID), s.space.Stock(activityID), s.space.WaitingSeen(activityID),
		s.space.WaitingDue(activityID), s.space.WaitingNotes(activityID))
}

// standingKeys are userKeys and the activity's buyer set and stock hash:
// standing.lua's KEYS, and so status.lua's and join.lua's.
func (s *Store) standingKeys(activityID int64) []string {
	return append(s.userKeys(activityID), s.buyers(activityID), s.space.Stock(activityID))
}

func num(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
