// Command chaos runs one long randomized fault campaign (internal/testkit/chaos)
// and prints every violation with the history around it, then, as its last
// line, `CHAOS seed=N faults=F kinds=K ops=O violations=V`. It exits 0 only
// when V is 0, 1 when the checker found violations, 2 when the campaign
// could not run. loadtest/chaos.sh builds and runs it; the order store is
// the Galera cluster of SECKILL_TEST_GALERA_* (every node may be killed:
// the script gives it a cluster of its own), else the MariaDB of
// SECKILL_TEST_MYSQL_DSN.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/testkit/chaos"
)

func main() {
	seed := flag.Int64("seed", 0, "seed of the fault schedule and the workload (0: drawn)")
	duration := flag.Duration("duration", 10*time.Minute, "how long faults and the workload run")
	redisMode := flag.String("redis", chaos.RedisSentinel, "Redis topology: sentinel or cluster")
	bin := flag.String("seckill", "", "the seckill binary the instances run")
	repo := flag.String("repo", ".", "the repository (scripts/services.sh restarts killed Galera nodes)")
	clients := flag.Int("clients", 6, "concurrent clients")
	dir := flag.String("dir", "", "where the instances' and Redis's logs go (kept; empty: a temporary folder, removed)")
	flag.Parse()
	if *seed == 0 {
		*seed = time.Now().UnixNano() % 1_000_000
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// The driver's own connections see the faults too (a killed Galera
	// node): its "unexpected EOF" lines say nothing the campaign does not.
	_ = mysql.SetLogger(stdlog.New(io.Discard, "", 0))
	cfg := chaos.Config{
		Seed: *seed, Duration: *duration, Redis: *redisMode, Binary: *bin, Clients: *clients, Dir: *dir, Log: log,
		Galera:   chaos.GaleraFromEnv(*repo, []int{1, 2, 3}),
		MySQLDSN: os.Getenv("SECKILL_TEST_MYSQL_DSN"),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res, err := chaos.Run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: seed %d: the campaign did not run: %v\n", *seed, err)
		os.Exit(2)
	}
	for _, v := range res.Violations {
		fmt.Println(v)
	}
	fmt.Printf("faults by kind: %s; books balanced %v after the heal\n", res.FaultTable(), res.Balanced.Round(time.Millisecond))
	fmt.Println(res.Summary())
	if len(res.Violations) > 0 {
		os.Exit(1)
	}
}
