// Package chaos is a randomized fault campaign against the real service, in
// the manner of Jepsen: three `seckill serve` processes on a Redis of its
// own (Sentinel or Cluster) and the order store (the Galera cluster behind
// HAProxy, or a single MariaDB), with the user-check and payment stubs; a
// seeded random schedule of concurrent faults, each healed after a random
// time (instance SIGKILL and SIGSTOP, the Redis primary killed or paused,
// a Galera node killed, Toxiproxy toxics on the service's links, COMMITs
// held past their writer's deadline, an activity's row held from outside); a
// workload whose every operation's invocation and completion go into a
// history; and a checker that reads the history and the final database
// and Redis state. e2e's TestChaos runs short campaigns, loadtest/chaos.sh
// long ones.
package chaos

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// BalanceBound is how long after the faults' end the books must balance by
// themselves.
const BalanceBound = 30 * time.Second

// The instances' lock settings (SECKILL_LOCK_WAIT, SECKILL_LOCK_TTL).
const (
	lockWait = time.Second
	lockTTL  = 2 * time.Second
)

// HoldBound is how long a buyer of one activity may wait for its answer
// while another activity's row is held (InvHoldRowOthers): the queue's lock
// wait and one lease, the longest a batch of its own may take, and a second
// for the clean-up after it and a loaded machine.
const HoldBound = lockWait + lockTTL + time.Second

// The open activities: openActivities of openStock units each, bought by a
// client of their own each, which no sale empties, so that their batches
// write all through the campaign: a hold-row holds one of their rows while
// the other's batches write.
const (
	openActivities = 2
	openStock      = 1000
)

// Config is one campaign.
type Config struct {
	Seed     int64
	Duration time.Duration // of the faults and the workload
	// Redis is RedisSentinel or RedisCluster; RedisServer the redis-server
	// binary ("redis-server" on PATH when empty).
	Redis       string
	RedisServer string
	// Binary is the seckill binary the instances run.
	Binary string
	// Galera is the order store when set; else MySQLDSN (a DSN without a
	// database) names a single MariaDB.
	Galera   *Galera
	MySQLDSN string
	// Clients, Activities, Stock size the workload (defaults 6, 3, 12).
	Clients    int
	Activities int
	Stock      int64
	// Quantity is the per_user_limit of the last of the Activities: its
	// buyers ask for 1..Quantity units (default 3; 1: one unit a buyer).
	Quantity int
	// PaymentWindow of the instances (default 4s).
	PaymentWindow time.Duration
	// Dir holds the instances' and Redis's logs and data (a temporary
	// folder, removed afterwards, when empty).
	Dir string
	Log *slog.Logger

	paymentSecret []byte
	adminToken    string
}

// Result is what a campaign did and found.
type Result struct {
	Seed       int64
	Faults     map[string]int // applied, by kind
	Ops        int
	Violations []Violation
	// Balanced is the longest time an activity's books took to balance
	// after the faults' end.
	Balanced time.Duration
}

// Kinds is the number of distinct fault kinds applied.
func (r Result) Kinds() int { return len(r.Faults) }

// FaultCount is the number of faults applied.
func (r Result) FaultCount() int {
	n := 0
	for _, c := range r.Faults {
		n += c
	}
	return n
}

// Summary is the campaign's last line.
func (r Result) Summary() string {
	return fmt.Sprintf("CHAOS seed=%d faults=%d kinds=%d ops=%d violations=%d", r.Seed, r.FaultCount(), r.Kinds(), r.Ops, len(r.Violations))
}

// FaultTable lists the faults applied per kind.
func (r Result) FaultTable() string { return strings.Join(kindsCount(r.Faults), " ") }

// Run runs one campaign: builds the cluster, runs the workload and the
// fault schedule for cfg.Duration, heals every fault, waits up to
// BalanceBound for the books, reads the final state and checks it. An
// error means the campaign could not run (a violation is not an error).
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg = withDefaults(cfg)
	res.Seed = cfg.Seed
	log := cfg.Log
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "seckill-chaos-"); err != nil {
			return res, fmt.Errorf("chaos: %w", err)
		}
		defer os.RemoveAll(cfg.Dir)
	}
	c := &cluster{cfg: cfg, galera: cfg.Galera, links: map[string][]*toxic.Proxy{}}
	defer c.close()
	if err := c.build(); err != nil {
		return res, err
	}
	acts, err := c.createActivities(ctx)
	if err != nil {
		return res, err
	}
	all, open := acts.all(), acts.open
	links := []string{LinkDB, LinkUserCheck, LinkPayment}
	if len(c.links[LinkRedis]) > 0 {
		links = append([]string{LinkRedis}, links...)
	}
	var galeraNodes []int
	if c.galera != nil {
		galeraNodes = c.galera.Killable
	}
	faults := schedule(cfg.Seed, cfg.Duration, len(c.instances), links, galeraNodes, true, true, len(c.links[LinkRedis]) > 0, open)
	log.Info("chaos: campaign starts", "seed", cfg.Seed, "duration", cfg.Duration, "redis", cfg.Redis,
		"store", c.storeName(), "faults_scheduled", len(faults), "activities", acts.sold, "open_activities", open, "room", acts.room, "dir", cfg.Dir)

	h := NewHistory()
	onHeld := func(activity int64, d time.Duration) { h.rowHeld(activity, d) }
	c.hold.held.Store(&onHeld)
	rdb := c.redis.Client()
	defer rdb.Close()
	inj := &injector{c: c, h: h, rdb: rdb, applied: map[string]int{}, busy: map[string]bool{}}
	w := newWorkload(c, h, acts)
	defer w.client.CloseIdleConnections()
	db, err := c.checkerDB()
	if err != nil {
		return res, err
	}
	defer db.Close()
	stocks := stock.New(rdb, keys.NewSpace(c.prefix))
	ws := startWatches(ctx, newLedgerWatch(stocks, all), newFenceWatch(db), newEventWatch(rdb, c.prefix+"events"))
	defer ws.halt()
	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	var wg sync.WaitGroup
	wg.Go(func() { inj.run(runCtx, faults) })
	wg.Go(func() { w.run(runCtx, cfg.Seed, cfg.Clients) })
	wg.Wait()
	stop()
	res.Faults = inj.applied
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err := c.hold.Unread(); err != nil {
		return res, err
	}
	// Every fault is healed; the cluster is whole again before the clock
	// of the books starts (a Galera node's rejoin, a Redis replica's sync).
	// A heal that failed is done again here, as an operator would: Redis
	// first, which the instances need to start.
	if v := c.redisVictim; v != nil && !v.Running() {
		if err := c.redis.Restart(v); err != nil {
			return res, fmt.Errorf("chaos: after the faults: %w", err)
		}
	}
	if c.galera != nil {
		if err := c.galera.restart(5 * time.Minute); err != nil {
			return res, fmt.Errorf("chaos: after the faults: %w", err)
		}
	}
	for _, in := range c.instances {
		if in.running() {
			if err := in.waitReady(2 * time.Minute); err != nil {
				return res, fmt.Errorf("chaos: after the faults: %w", err)
			}
		} else if err := in.restart(5 * time.Minute); err != nil {
			return res, fmt.Errorf("chaos: after the faults: %w", err)
		}
	}
	if err := redistopo.WaitFor(2*time.Minute, "Redis whole again", c.redis.Settled); err != nil {
		return res, fmt.Errorf("chaos: %w", err)
	}
	// A COMMIT held by a late-status-commit lands up to 28 s after its fault
	// healed: the books' clock starts once it has.
	if err := redistopo.WaitFor(time.Minute, "every held COMMIT and deduct delivered", func() bool {
		_, deducts := c.redis.deductsHeld()
		return c.late.Holding() == 0 && deducts == 0
	}); err != nil {
		return res, fmt.Errorf("chaos: %w", err)
	}
	log.Info("chaos: faults over, every fault healed; the room's quiet phase", "settle", quietSettle, "for", quietFor)
	w.quietRoom(ctx, cfg.Seed, cfg.Clients+len(acts.open)+roomClients)
	healed := time.Now()
	log.Info("chaos: faults over, every fault healed; waiting for the books", "faults", res.FaultTable())
	st, err := c.finalState(ctx, all, healed, db, stocks)
	if err != nil {
		return res, err
	}
	if err := ws.finish(ctx, &st, db, log); err != nil {
		return res, err
	}
	ops := h.Ops()
	res.Ops = len(ops)
	for _, a := range st.activities {
		res.Balanced = max(res.Balanced, a.Balanced)
	}
	st.room = acts.room
	res.Violations = check(h, ops, st)
	logCounted(log, h, ops, res, acts.room, w.limits)
	return res, nil
}

// logCounted logs how many purchases the invariants that look at some of
// them held to their bound: a count near 0 would pass whatever happened.
func logCounted(log *slog.Logger, h *History, ops []Op, res Result, room int64, limits map[int64]int) {
	_, counted := checkHoldRows(ops, h.Faults(), HoldBound)
	log.Info("chaos: buyers of other activities during the hold-rows", "hold_rows", res.Faults[HoldRow],
		"purchases_counted", counted, "bound", HoldBound)
	_, admitted := checkRoom(ops, h.Faults(), room)
	log.Info("chaos: the waiting room's admitted purchases held to never sold_out, outside the faults", "activity", room,
		"requests_counted", admitted, "answers", strings.Join(kindsCount(answersOf(ops, room)), " "))
	for act, limit := range limits {
		log.Info("chaos: the answers on the activity sold by quantity", "activity", act, "per_user_limit", limit,
			"answers", strings.Join(kindsCount(answersOf(ops, act)), " "))
	}
}

// answersOf counts an activity's operations by kind and answer (and queue
// state, and the units a buy asked for): what the workload did there.
func answersOf(ops []Op, act int64) map[string]int {
	out := map[string]int{}
	for _, o := range ops {
		if o.Activity != act {
			continue
		}
		k := o.Kind + ":" + strings.ReplaceAll(o.Answer(), " ", "_")
		if o.Quantity > 0 {
			k = fmt.Sprintf("%s:x%d", k, o.Quantity)
		}
		switch {
		case o.Unknown:
			k = o.Kind + ":unknown"
		case o.QueueState != "":
			k += ":" + o.QueueState
		}
		out[k]++
	}
	return out
}

// newWorkload is the workload of the campaign's activities.
func newWorkload(c *cluster, h *History, acts activities) *workload {
	w := &workload{c: c, h: h, activities: acts.sold, open: acts.open, own: append([]int64{acts.room}, acts.open...),
		room: acts.room, roomClients: roomClients, limits: map[int64]int{}, seed: c.cfg.Seed, nextID: map[int64]int64{},
		client: &http.Client{Timeout: answerTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	if c.cfg.Quantity > 1 {
		w.limits[acts.sold[len(acts.sold)-1]] = c.cfg.Quantity
	}
	return w
}

func withDefaults(cfg Config) Config {
	if cfg.Redis == "" {
		cfg.Redis = RedisSentinel
	}
	if cfg.RedisServer == "" {
		cfg.RedisServer = "redis-server"
	}
	if cfg.Clients == 0 {
		cfg.Clients = 6
	}
	if cfg.Activities == 0 {
		cfg.Activities = 3
	}
	if cfg.Stock == 0 {
		cfg.Stock = 12
	}
	if cfg.Quantity == 0 {
		cfg.Quantity = 3
	}
	if cfg.PaymentWindow == 0 {
		cfg.PaymentWindow = 4 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.paymentSecret = []byte("chaos-" + randomHex(16)) // 38 bytes: the secure defaults want 32
	cfg.adminToken = "chaos-" + randomHex(8)
	return cfg
}
