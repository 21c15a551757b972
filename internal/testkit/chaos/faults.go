package chaos

import (
	"context"
	"fmt"
	"github.com/redis/go-redis/v9"
	"math/rand/v2"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// The kinds of fault a schedule draws from.
const (
	InstanceKill  = "instance-kill"  // SIGKILL a service instance; heal: start it again
	InstancePause = "instance-pause" // SIGSTOP an instance (a GC pause, a stalled VM); heal: SIGCONT
	RedisKill     = "redis-kill"     // SIGKILL the Redis primary; heal: start it again as a replica
	RedisPause    = "redis-pause"    // SIGSTOP the Redis primary; heal: SIGCONT
	GaleraKill    = "galera-kill"    // SIGKILL a Galera node; heal: start it again (IST)
	// LateCommit holds every COMMIT sent to the database 3-4.5 s, past
	// the 2 s lease that bounds a purchase batch, so its sender gives up
	// and closes the connection, and delivers it then: the transaction
	// commits after its writer was told nothing (the reply lost with the
	// connection), while reads sent after the fault pass it. Heal: COMMITs
	// pass at once again (those held keep their delay).
	LateCommit = "late-commit"
	// LateStatusCommit holds the COMMITs of order status changes only,
	// 20-28 s: past the database driver's 10 s read timeout and the 2 s
	// locking read after it, which bound a payment verification (its lease
	// is renewed while it waits), and past a result page's 6 s answer
	// timeout. That verification then gives the order's lock up, and
	// another's (a result page's, watch) reads the order as it was and
	// decides; its expiry then waits for the activity's row, which the held
	// transaction keeps, and writes once the COMMIT lands. With holds of
	// 13-16 s no second verification wrote before the COMMIT landed, in 51
	// minutes of campaigns. Holding every COMMIT that long
	// would hold the activity's row behind a batch's, and no status change
	// would get as far as its own COMMIT.
	LateStatusCommit = "late-status-commit"
	// LateDeduct holds every purchase batch's deduct sent to Redis (Sentinel
	// mode: the data nodes are proxied) 2.5-4 s, past the batch's 2 s lease
	// and go-redis's resends after each 500 ms read timeout, which are held
	// too. The batch gives up and settles at 0 (a tombstone receipt), and
	// then the deduct and its resends land: what deduct.lua's receipt check
	// is for. A toxic cannot do it: it would hold the settle as well. Heal:
	// deducts pass at once again (those held keep their delay).
	LateDeduct = "late-deduct"
	// HoldRow holds one activity's row from outside the service, as an
	// operator's or a report's transaction might: on the campaign's order
	// database (not through the service's link), a transaction runs
	// `SELECT id FROM activities WHERE id = ? FOR UPDATE` on one of the
	// activities that never sell out and keeps the row 3-5 s. Every batch of
	// that activity waits for the row within its lease; no other activity's
	// may (InvHoldRowOthers). Heal: the transaction rolls back.
	HoldRow = "hold-row"
)

// The links a toxic goes on: the service's connections to each dependency.
const (
	LinkRedis     = "redis"
	LinkDB        = "db"
	LinkUserCheck = "usercheck"
	LinkPayment   = "payment"
)

// fault is one scheduled fault.
type fault struct {
	kind   string // one of the kinds above, or a toxic type
	link   string // for a toxic
	target int    // instance index or Galera node
	at     time.Duration
	dur    time.Duration
	toxic  toxic.Toxic
	delay  time.Duration // of a LateCommit
	// activity is the activity whose row a HoldRow holds.
	activity int64
	// n is the fault's index in its schedule, which tells its heal apart
	// from another fault's with the same name.
	n int
}

// Kind is the fault's kind as counted: "instance-kill", "latency@redis", ...
func (f fault) Kind() string {
	if f.link != "" {
		return f.kind + "@" + f.link
	}
	return f.kind
}

func (f fault) String() string {
	switch f.kind {
	case InstanceKill, InstancePause:
		return fmt.Sprintf("%s i%d for %v", f.kind, f.target, f.dur.Round(time.Millisecond))
	case GaleraKill:
		return fmt.Sprintf("%s node%d for %v", f.kind, f.target, f.dur.Round(time.Millisecond))
	case RedisKill, RedisPause:
		return fmt.Sprintf("%s for %v", f.kind, f.dur.Round(time.Millisecond))
	case LateCommit, LateStatusCommit, LateDeduct:
		return fmt.Sprintf("%s by %v for %v", f.kind, f.delay.Round(time.Millisecond), f.dur.Round(time.Millisecond))
	case HoldRow:
		return fmt.Sprintf("%s act=%d for %v", f.kind, f.activity, f.dur.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s %s %v for %v", f.Kind(), f.toxic.Stream, f.toxic.Attributes, f.dur.Round(time.Millisecond))
}

// resource is what the fault takes: two faults on one resource never run at
// once (the later one is skipped).
func (f fault) resource() string {
	switch f.kind {
	case InstanceKill, InstancePause:
		return fmt.Sprintf("instance%d", f.target)
	case RedisKill, RedisPause:
		return "redis"
	case GaleraKill:
		return "galera"
	case LateCommit, LateStatusCommit:
		return LateCommit // one proxy holds both
	case LateDeduct:
		return LateDeduct
	case HoldRow:
		return HoldRow
	}
	return "link:" + f.link
}

// schedule draws the faults of a campaign from its seed: one starts every
// 0.3-2.5 s, each lasting 0.5-8 s, so several overlap. links are the links
// that have proxies; galeraNodes the Galera nodes that may be killed;
// lateCommits whether the database link can hold COMMITs; lateDeducts
// whether the Redis link can hold deducts; holdRows the activities whose
// row a hold-row may hold (none: no hold-row). The late-deducts come from a
// stream of their own, one every 5-15 s, and the hold-rows from another,
// one every 5-10 s, so a seed's other faults are those it drew before they
// existed.
func schedule(seed int64, d time.Duration, instances int, links []string, galeraNodes []int, redisFaults, lateCommits, lateDeducts bool, holdRows []int64) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5ec1))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	kinds := []string{InstanceKill, InstancePause, InstancePause}
	if redisFaults {
		kinds = append(kinds, RedisKill, RedisPause)
	}
	if len(galeraNodes) > 0 {
		kinds = append(kinds, GaleraKill)
	}
	if lateCommits {
		kinds = append(kinds, LateCommit, LateCommit, LateStatusCommit, LateStatusCommit)
	}
	toxics := []string{toxic.Latency, toxic.Bandwidth, toxic.Timeout, toxic.ResetPeer}
	for range links {
		kinds = append(kinds, "toxic", "toxic")
	}
	var out []fault
	for at := between(time.Second, 2*time.Second); at < d; at += between(300*time.Millisecond, 2500*time.Millisecond) {
		f := fault{kind: kinds[rng.IntN(len(kinds))], at: at}
		switch f.kind {
		case InstanceKill:
			f.target, f.dur = rng.IntN(instances), between(500*time.Millisecond, 6*time.Second)
		case InstancePause:
			// Past the 2 s lease half the time: the holder wakes up with
			// its lease gone.
			f.target, f.dur = rng.IntN(instances), between(300*time.Millisecond, 4*time.Second)
		case RedisKill:
			f.dur = between(time.Second, 5*time.Second)
		case RedisPause:
			f.dur = between(500*time.Millisecond, 5*time.Second)
		case GaleraKill:
			f.target, f.dur = galeraNodes[rng.IntN(len(galeraNodes))], between(2*time.Second, 8*time.Second)
		case LateCommit:
			// On for long enough to catch several batches' COMMITs.
			f.delay, f.dur = between(3*time.Second, 4500*time.Millisecond), between(500*time.Millisecond, 2500*time.Millisecond)
		case LateStatusCommit:
			f.delay, f.dur = between(20*time.Second, 28*time.Second), between(1*time.Second, 4*time.Second)
		case "toxic":
			f.link = links[rng.IntN(len(links))]
			f.kind = toxics[rng.IntN(len(toxics))]
			f.dur = between(500*time.Millisecond, 6*time.Second)
			f.toxic = drawToxic(rng, f.kind)
		}
		out = append(out, f)
	}
	if lateDeducts {
		rng = rand.New(rand.NewPCG(uint64(seed), 0xded0c7))
		for at := between(2*time.Second, 8*time.Second); at < d; at += between(5*time.Second, 15*time.Second) {
			out = append(out, fault{kind: LateDeduct, at: at, delay: between(2500*time.Millisecond, 4*time.Second),
				dur: between(500*time.Millisecond, 2*time.Second)})
		}
	}
	if len(holdRows) > 0 {
		rng = rand.New(rand.NewPCG(uint64(seed), 0x401d))
		for at := between(time.Second, 5*time.Second); at < d; at += between(5*time.Second, 10*time.Second) {
			out = append(out, fault{kind: HoldRow, at: at, activity: holdRows[rng.IntN(len(holdRows))],
				dur: between(3*time.Second, 5*time.Second)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	for i := range out {
		out[i].n = i
	}
	return out
}

func drawToxic(rng *rand.Rand, kind string) toxic.Toxic {
	streams := []string{toxic.Upstream, toxic.Downstream}
	t := toxic.Toxic{Name: "chaos", Type: kind, Stream: streams[rng.IntN(2)]}
	switch kind {
	case toxic.Latency:
		t.Attributes = map[string]any{"latency": 20 + rng.IntN(1200), "jitter": rng.IntN(100)}
	case toxic.Bandwidth:
		t.Attributes = map[string]any{"rate": 1 + rng.IntN(64)}
	case toxic.Timeout:
		// 0: a black hole until healed; else the connection closes then.
		t.Attributes = map[string]any{"timeout": []int{0, 200, 1000, 3000}[rng.IntN(4)]}
	case toxic.ResetPeer:
		t.Attributes = map[string]any{"timeout": rng.IntN(500)}
	}
	return t
}

// injector applies the schedule to the cluster and records every fault and
// heal in the history.
type injector struct {
	c       *cluster
	h       *History
	rdb     redis.UniversalClient // the topology's, for awaitResync
	applied map[string]int        // by Kind

	mu   sync.Mutex
	busy map[string]bool
	down int // instances killed or paused now
}

// run applies the faults at their times until ctx ends; every fault
// applied is healed by the time run returns (at its time, or at once when
// ctx ends).
func (in *injector) run(ctx context.Context, faults []fault) {
	start := time.Now()
	var wg sync.WaitGroup
	for _, f := range faults {
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(f.at))):
		}
		if ctx.Err() != nil {
			break
		}
		if !in.take(f) {
			continue
		}
		wg.Go(func() {
			defer in.release(f)
			if err := in.apply(f); err != nil {
				// E.g. no primary to kill while the Sentinels fail over:
				// the fault is not applied, nor counted.
				in.c.cfg.Log.Warn("chaos: fault not applied", "fault", f.String(), "err", err)
				in.uncount(f)
				return
			}
			in.h.fault(f, false)
			select {
			case <-ctx.Done():
			case <-time.After(f.dur):
			}
			// A heal that fails (a restart refused while another fault
			// holds the database) is logged, not fatal: the cluster must
			// be whole again after the faults (Run checks), as it must
			// after any incident.
			if err := in.heal(f); err != nil {
				in.c.cfg.Log.Warn("chaos: heal failed", "fault", f.String(), "err", err)
			}
			in.h.fault(f, true)
			if f.kind == RedisKill || f.kind == RedisPause {
				// Its own goroutine: the next fault's schedule is the
				// seed's, however long the copy takes.
				wg.Go(func() { in.awaitResync(ctx, time.Now()) })
			}
		})
	}
	wg.Wait()
}

func (in *injector) uncount(f fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.applied[f.Kind()]--
	if in.applied[f.Kind()] == 0 {
		delete(in.applied, f.Kind())
	}
}

func (in *injector) take(f fault) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	r := f.resource()
	if in.busy[r] {
		return false
	}
	instanceFault := f.kind == InstanceKill || f.kind == InstancePause
	// One instance always serves: a sale with every instance down
	// shows nothing the kills of two do not.
	if instanceFault && in.down >= len(in.c.instances)-1 {
		return false
	}
	in.busy[r] = true
	if instanceFault {
		in.down++
	}
	in.applied[f.Kind()]++
	return true
}

func (in *injector) release(f fault) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.busy, f.resource())
	if f.kind == InstanceKill || f.kind == InstancePause {
		in.down--
	}
}

func (in *injector) apply(f fault) error {
	c := in.c
	switch f.kind {
	case InstanceKill:
		c.instances[f.target].kill()
	case InstancePause:
		c.instances[f.target].pause(true)
	case RedisKill, RedisPause:
		// A node a kill's heal could not start again (the Sentinels had not
		// failed over from it in time, under the links' faults) is started
		// first: a kill of the primary that took over from it would leave
		// no Redis at all for the rest of the campaign.
		if v := c.redisVictim; v != nil && !v.Running() {
			if err := c.redis.Restart(v); err != nil {
				return fmt.Errorf("the last killed Redis node is still down: %w", err)
			}
		}
		p, err := c.redis.Primary()
		if err != nil {
			return err
		}
		c.redisVictim = p
		if f.kind == RedisKill {
			p.Kill()
		} else {
			p.Signal(syscall.SIGSTOP)
		}
	case GaleraKill:
		return c.galera.killNode(f.target)
	case LateCommit, LateStatusCommit:
		c.hold.statusOnly.Store(f.kind == LateStatusCommit)
		c.hold.delay.Store(int64(f.delay))
		c.late.SetRequestDelay(f.delay)
	case LateDeduct:
		c.redis.setDeductDelay(f.delay)
	case HoldRow:
		return c.rows.hold(f.activity)
	default:
		for _, p := range c.links[f.link] {
			if err := p.Add(f.toxic); err != nil {
				return err
			}
		}
	}
	return nil
}

func (in *injector) heal(f fault) error {
	c := in.c
	switch f.kind {
	case InstanceKill:
		return c.instances[f.target].restart(5 * time.Minute)
	case InstancePause:
		c.instances[f.target].pause(false)
	case RedisKill:
		return c.redis.Restart(c.redisVictim)
	case RedisPause:
		c.redisVictim.Signal(syscall.SIGCONT)
	case GaleraKill:
		return c.galera.restart(5 * time.Minute)
	case LateCommit, LateStatusCommit:
		c.late.SetRequestDelay(0)
		c.cfg.Log.Info("chaos: late-commit healed", "commits_held_so_far", c.late.Held())
	case LateDeduct:
		c.redis.setDeductDelay(0)
		held, _ := c.redis.deductsHeld()
		c.cfg.Log.Info("chaos: late-deduct healed", "deducts_held_so_far", held)
	case HoldRow:
		return c.rows.release()
	default:
		for _, p := range c.links[f.link] {
			if err := p.Remove(f.toxic.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// kindsCount returns the faults applied by kind, sorted by kind.
func kindsCount(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(out)
	return out
}
