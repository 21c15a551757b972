// Command naiveserver serves the service's HTTP API with incident A's
// purchase handler (loadtest/naive) in place of the purchase, for
// loadtest/run.sh --naive to show the oversell the service prevents. It
// oversells on purpose: never run it as the service. Everything but the
// purchase is the service's own packages: creating and preloading
// activities, the buyer's reads, the audit the load test reads, /readyz and
// /metrics. It has no books sweep (the sweep would reload the stock the
// seed's handler takes without recording it), no payments and no waiting
// rooms.
//
// It reads the service's variables that run.sh sets, with their meaning in
// docs/API.md (config.go lists them); Redis, MySQL/MariaDB and the
// user-verification service are required: the seed wrote with SQL and its
// race needs a verification call that outlives the lock.
//
//	SECKILL_REDIS_URL=redis://127.0.0.1:6379/0 SECKILL_MYSQL_DSN='u:p@tcp(127.0.0.1:3306)/db' \
//	SECKILL_USERCHECK_URL=http://127.0.0.1:8081 SECKILL_ADMIN_TOKEN=t go run ./loadtest/naiveserver
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/loadtest/naive"
)

func main() {
	gin.SetMode(gin.ReleaseMode) // no route tables on stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "naiveserver: %v\n", err)
		os.Exit(1)
	}
}

// run serves until ctx ends (SIGINT/SIGTERM), then closes what it opened.
func run(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	log.Warn("purchases run the seed incident's broken handler: this server oversells on purpose")
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	users := usercheck.New(usercheck.Config{BaseURL: cfg.userCheckURL, Timeout: cfg.userCheckTimeout, Logger: log, Registry: reg})
	defer users.Close()
	s, err := openStores(ctx, cfg, users, log, reg)
	if err != nil {
		return err
	}
	defer s.Close()

	// The seed's lock lived a tenth of its verification timeout (10 s
	// under 30 s): calls that succeed still outlive it.
	seed := &naive.Seed{Redis: s.rdb, DB: s.db, Users: users, Prefix: cfg.keyPrefix, LockTTL: cfg.userCheckTimeout / 10}
	h := httpapi.NewServer(httpapi.Config{AdminToken: cfg.adminToken}, httpapi.Deps{
		Service: seedService{Service: s.service, seed: seed}, Tasks: s.service, Pricer: s.service,
		Logger: log, Registry: reg, Gatherer: reg,
	})
	return serve(ctx, cfg.httpAddr, h, log)
}
