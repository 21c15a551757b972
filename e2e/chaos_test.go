package e2e_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/chaos"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

var (
	chaosSeed     = flag.Int64("seed", 0, "TestChaos: replay the campaign of this seed (0: three new seeds)")
	chaosDuration = flag.Duration("chaos.duration", 20*time.Second, "TestChaos: how long each campaign's faults run")
)

// chaosMode is the Redis mode of a seed's campaign: even seeds run on
// Sentinel, odd ones on the Cluster, so -seed alone replays a campaign.
func chaosMode(seed int64) string {
	if seed%2 == 0 {
		return chaos.RedisSentinel
	}
	return chaos.RedisCluster
}

// TestChaos runs short randomized fault campaigns (internal/testkit/chaos): three
// service processes on a Redis of their own (Sentinel for an even seed,
// the Cluster for an odd one) and the order store on Galera behind HAProxy
// (a single MariaDB when SECKILL_TEST_GALERA_DSN is unset; no node is
// killed here: the cluster is shared with other packages' tests running at
// the same time, and loadtest/chaos.sh kills nodes of a cluster of its
// own). Three seeds (Sentinel, Cluster, Sentinel), each with 20 s of
// concurrent faults (-chaos.duration) drawn from the seed under a small
// workload, then the checker over the history and the final database and
// Redis state: about a minute of faults in all. Each campaign logs its
// seed; `go test ./e2e -run TestChaos -seed=N` replays one (the fault
// schedule and every client's choices; not the exact interleaving).
// loadtest/chaos.sh runs long campaigns.
//
// Can fail (docs/FAULTS.md, "Guards taken away"): with the deduct receipt
// or the claim's fence check taken away, seeds 318 and 322
// (-chaos.duration=3m) fail the ledger's or the fence's watch; with the
// locking read after an unknown COMMIT taken away, seeds 107 and 108
// (-chaos.duration=60s) print "no order made during a request that
// answered nothing was sold"; with the expiry's status condition taken
// away, seed 320 (-chaos.duration=5m) prints "each expiry gave back
// exactly its order's units" (then "exactly one unit"). With the group's
// SKIP LOCKED taken away, no seed tried (100, 102, 115, 519, 60 s) broke
// the hold-row bound (docs/FAULTS.md says why).
// The waiting room's clients (internal/testkit/chaos/room.go) run beside
// the main clients, whose choices each seed still draws as before.
func TestChaos(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: the campaign runs a Redis of its own (scripts/test.sh installs it)")
	}
	seeds := []int64{*chaosSeed}
	if *chaosSeed == 0 {
		s := time.Now().UnixNano() % 1_000_000
		seeds = []int64{s - s%2, s - s%2 + 1, s - s%2 + 2}
	}
	bin := seckillBinary(t)
	for _, seed := range seeds {
		mode := chaosMode(seed)
		t.Run(fmt.Sprintf("seed=%d/%s", seed, mode), func(t *testing.T) {
			t.Logf("seed %d (%s); replay: go test ./e2e -run TestChaos -seed=%d", seed, mode, seed)
			cfg := chaos.Config{
				Seed: seed, Duration: *chaosDuration, Redis: mode, Binary: bin,
				Galera: chaos.GaleraFromEnv("..", nil),
				Dir:    t.TempDir(),
				Log:    slog.New(slog.NewTextHandler(testWriter{t}, nil)),
			}
			if cfg.Galera == nil {
				cfg.MySQLDSN = testenv.MySQLDSN(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration+5*time.Minute)
			defer cancel()
			res, err := chaos.Run(ctx, cfg)
			if err != nil {
				t.Fatalf("seed %d: the campaign did not run: %v", seed, err)
			}
			for _, v := range res.Violations {
				t.Errorf("seed %d: %s", seed, v)
			}
			t.Logf("%s; faults %s; books balanced %v after the heal", res.Summary(), res.FaultTable(), res.Balanced.Round(time.Millisecond))
			if res.FaultCount() == 0 || res.Ops == 0 {
				t.Errorf("seed %d: %d faults, %d operations: the campaign tested nothing", seed, res.FaultCount(), res.Ops)
			}
		})
	}
}

// testWriter sends a logger's lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
