// Command roommem measures the Redis memory a waiting user costs: it opens
// one activity's waiting room under a key prefix of its own (the service's
// waitingroom.Store), fills its line with -places users by running the
// service's own join.lua (read from -join, after the standing.lua beside it,
// as the service joins them; EVALSHA pipelined -batch at a time, one user a
// call, with the service's keys and arguments: the member is the
// decimal user id, the score a 52-bit pre-queue place, or 2^52 + the
// arrival number with -shape late), and reports the growth of INFO memory
// used_memory per place, and MEMORY USAGE of the line. It then deletes every
// key it wrote. One JSON line on stdout; exit 1 when the places would need
// more than -target-mb for a million. Only loopback Redis.
//
//	go run ./loadtest/roommem [-places 1000000] [-shape prequeue|late]
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "roommem:", err)
		os.Exit(1)
	}
}

// loadJoin reads join.lua at path after the standing.lua beside it, as the
// service joins them (luascript.Load).
func loadJoin(path string) (*redis.Script, error) {
	var src []byte
	for _, p := range []string{filepath.Join(filepath.Dir(path), "standing.lua"), path} {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w (run from the repository root, or give -join)", err)
		}
		src = append(append(src, b...), '\n')
	}
	return redis.NewScript(string(src)), nil
}

// joinAnswer is the answer of a join.lua call of one user: its one reply
// up to the first comma.
func joinAnswer(c *redis.Cmd) string {
	replies, _ := c.Slice()
	if len(replies) != 1 {
		return fmt.Sprint(replies)
	}
	reply, _ := replies[0].(string)
	answer, _, _ := strings.Cut(reply, ",")
	return answer
}

func run() error {
	addr := flag.String("redis", "127.0.0.1:6379", "Redis address (loopback only)")
	places := flag.Int("places", 1000000, "places to fill the line with")
	batch := flag.Int("batch", 2000, "joins per pipeline")
	shape := flag.String("shape", "prequeue", "prequeue: joins before the start (52-bit drawn places); late: after it (2^52 + arrival)")
	joinPath := flag.String("join", "internal/waitingroom/join.lua", "the service's join.lua")
	firstUser := flag.Int64("first-user", 1000000, "user id of the first place (decimal ids of 7+ digits, as a real crowd's)")
	targetMB := flag.Float64("target-mb", 200, "most MB a million places may take")
	flag.Parse()
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-redis %q: only a loopback Redis", *addr)
	}
	if *places < 1 || *batch < 1 {
		return errors.New("-places and -batch must be positive")
	}
	join, err := loadJoin(*joinPath)
	if err != nil {
		return err
	}

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, ReadTimeout: 30 * time.Second})
	defer rdb.Close()
	prefix := fmt.Sprintf("roommem%d_%d:", time.Now().Unix(), os.Getpid())
	const activity = 1
	defer cleanup(rdb, prefix)

	now := time.Now()
	w := waitingroom.Window{OpensAt: now.Add(-time.Minute), StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour), Seed: seed()}
	if *shape == "late" {
		w.StartsAt = now.Add(-time.Second)
	} else if *shape != "prequeue" {
		return fmt.Errorf("-shape %q: prequeue or late", *shape)
	}
	if err := waitingroom.NewStore(rdb, keys.NewSpace(prefix), 0, 0).Open(ctx, activity, w); err != nil {
		return err
	}
	ks := []string{keys.NewSpace(prefix).WaitingRoom(activity), keys.NewSpace(prefix).WaitingLine(activity),
		keys.NewSpace(prefix).WaitingAdmitted(activity), keys.NewSpace(prefix).WaitingEnds(activity),
		keys.NewSpace(prefix).Buyers(activity), keys.NewSpace(prefix).Stock(activity)}
	if err := join.Load(ctx, rdb).Err(); err != nil {
		return err
	}
	before, err := usedMemory(ctx, rdb)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for from := 0; from < *places; from += *batch {
		pipe := rdb.Pipeline()
		cmds := make([]*redis.Cmd, 0, *batch)
		for i := from; i < min(from+*batch, *places); i++ {
			cmds = append(cmds, join.EvalSha(ctx, pipe, ks, *firstUser+int64(i), waitingroom.DefaultMaxPlaces+*places, 1))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("joins %d..: %w", from, err)
		}
		for _, c := range cmds {
			if v := joinAnswer(c); v != "joined" {
				return fmt.Errorf("join.lua answered %q, want joined", v)
			}
		}
	}
	took := time.Since(t0)
	after, err := usedMemory(ctx, rdb)
	if err != nil {
		return err
	}
	n, err := rdb.ZCard(ctx, ks[1]).Result()
	if err != nil {
		return err
	}
	if n != int64(*places) {
		return fmt.Errorf("the line holds %d places, want %d", n, *places)
	}
	// The score shape: every place below 2^52 before the start, at or above after.
	low, _ := rdb.ZRangeWithScores(ctx, ks[1], 0, 0).Result()
	high, _ := rdb.ZRangeWithScores(ctx, ks[1], -1, -1).Result()
	lineBytes, err := rdb.MemoryUsage(ctx, ks[1], 0).Result()
	if err != nil {
		return err
	}
	enc, _ := rdb.ObjectEncoding(ctx, ks[1]).Result()
	per := float64(after-before) / float64(*places)
	perLine := float64(lineBytes) / float64(*places)
	ok := per <= *targetMB && perLine <= *targetMB // bytes per place == MB per million
	out := map[string]any{
		"places": *places, "shape": *shape, "encoding": enc,
		"lowest": low[0], "highest": high[0],
		"used_memory_delta_bytes": after - before, "bytes_per_user": math.Round(per*10) / 10,
		"line_memory_usage_bytes": lineBytes, "line_bytes_per_user": math.Round(perLine*10) / 10,
		"mb_per_million": math.Round(per*10) / 10, "target_mb_per_million": *targetMB,
		"joins_per_s": math.Round(float64(*places) / took.Seconds()), "pass": ok,
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%.1f bytes per waiting user: a million would need more than %.0f MB", max(per, perLine), *targetMB)
	}
	return nil
}

// usedMemory reads INFO memory's used_memory.
func usedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("INFO memory has no used_memory")
}

func seed() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cleanup deletes every key under the prefix (the room, its line, and the
// list of rooms).
func cleanup(rdb *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var ks []string
	for iter.Next(ctx) {
		ks = append(ks, iter.Val())
	}
	if len(ks) > 0 {
		if err := rdb.Unlink(ctx, ks...).Err(); err != nil {
			fmt.Fprintln(os.Stderr, "roommem: keys not deleted:", err, ks)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "roommem: deleted %d keys under %s\n", len(ks), prefix)
}
