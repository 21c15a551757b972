package luascript_test

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// A script reads fields by name (room.ends, from fields(KEYS[1], ROOM.ends)),
// so every field of package keys must be a Lua name, and each once.
func TestFieldsAreLuaNames(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reserved := []string{"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in",
		"local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"}
	for hash, fields := range map[string][]string{"stock": keys.StockFields, "room": keys.RoomFields} {
		seen := map[string]bool{}
		for _, f := range fields {
			if !name.MatchString(f) || slices.Contains(reserved, f) {
				t.Errorf("%s hash field %q is not a Lua name", hash, f)
			}
			if seen[f] {
				t.Errorf("%s hash field %q listed twice", hash, f)
			}
			seen[f] = true
		}
	}
}

// The prelude's functions, run in Redis: STOCK.<field> and ROOM.<field>
// are package keys's names, fields reads by name, keep sets the keys' end
// plus the retention, receipt reads each form of a deduct's receipt.
func TestPrelude(t *testing.T) {
	rdb, prefix := testenv.Redis(t), testenv.Prefix(t)
	ctx := context.Background()
	room, line := keys.NewSpace(prefix).WaitingRoom(1), keys.NewSpace(prefix).WaitingLine(1)
	if err := rdb.HSet(ctx, room, keys.RoomEnds, 4_000_000_000_000, keys.RoomHold, 3).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, line, redis.Z{Score: 1, Member: "u"}).Err(); err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{"check.lua": {Data: []byte(`
local room = fields(KEYS[1], ROOM.ends, ROOM.hold, ROOM.closed)
keep(room.ends, ARGV[1], KEYS[1], KEYS[2])
local e1, u1, s1 = receipt('7:3')
local e2, u2, s2 = receipt('7:3:1,4,5')
local now = clock()
return {STOCK.remaining, STOCK.paused, ROOM.used_seen, room.hold, tostring(room.closed),
  e1, tostring(u1), s1, e2, tostring(u2), s2, tostring(now > 1700000000000)}`)}}
	got, err := luascript.LoadWithPrelude(files, "check.lua").Run(ctx, rdb, []string{room, line}, 1000).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{keys.StockRemaining, keys.StockPaused, keys.RoomUsedSeen, "3", "false", "7", "3", "", "7", "3", "1,4,5", "true"}
	if !slices.Equal(got, want) {
		t.Errorf("prelude's reply %q, want %q", got, want)
	}
	for _, k := range []string{room, line} {
		if at, err := rdb.PExpireTime(ctx, k).Result(); err != nil || at.Milliseconds() != 4_000_000_001_000 {
			t.Errorf("%s expires at %v (%v), want the end plus the retention", k, at, err)
		}
	}
}

// A field package keys does not list for that hash is refused when the
// script loads, not when a run reaches it.
func TestUnknownFieldPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a script naming ROOM.ending loaded")
		}
	}()
	luascript.LoadWithPrelude(fstest.MapFS{"bad.lua": {Data: []byte(`return redis.call('HGET', KEYS[1], ROOM.ending)`)}}, "bad.lua")
}
