package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// userstub serves a stand-in for the user-verification service, for local
// runs, docker-compose and the load tests, with settable latency, rejections
// and failures (-slow-rate with -slow-latency above the lock TTL makes calls
// that outlive the lease). The behaviour can also change while it runs: PUT /stub/config.
func userstub(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("userstub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8081", "listen address")
	var sc usercheck.StubConfig
	fs.DurationVar(&sc.Latency, "latency", 0, "delay of every answer")
	fs.Float64Var(&sc.SlowRate, "slow-rate", 0, "share of answers (0..1) delayed by -slow-latency instead")
	fs.DurationVar(&sc.SlowLatency, "slow-latency", 0, "delay of the slow answers")
	fs.Float64Var(&sc.RejectRate, "reject-rate", 0, "share of users (0..1) answered eligible:false")
	fs.Float64Var(&sc.FailRate, "fail-rate", 0, "share of answers (0..1) that are 500 errors")
	fs.Uint64Var(&sc.Seed, "seed", 0, "seed of the random choices, to replay a run (0: random)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stub, err := usercheck.NewStub(sc)
	if err != nil {
		fmt.Fprintf(stderr, "userstub: %v\n", err)
		return errUsage
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	return serveStub(ctx, "userstub", *addr, stub, log,
		"latency", sc.Latency, "slow_rate", sc.SlowRate, "slow_latency", sc.SlowLatency,
		"reject_rate", sc.RejectRate, "fail_rate", sc.FailRate)
}

// serveStub serves a stub (the verification or the payment provider's) on
// addr until ctx ends, logging its settings (attrs) once it listens.
func serveStub(ctx context.Context, name, addr string, h http.Handler, log *slog.Logger, attrs ...any) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", name, addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("listening", append([]any{"addr", ln.Addr().String(), "service", name}, attrs...)...)
	if err := serveUntil(ctx, srv, ln, 5*time.Second, 5*time.Second, log); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
