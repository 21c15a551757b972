// Command faultproxy runs a Toxiproxy proxy (internal/testkit/toxic) as a process, so a load test
// can put it between the service and Redis and inject the fault of a lock
// whose acquire timed out but had succeeded while a sale runs:
//
//	faultproxy -target 127.0.0.1:6379 -control 127.0.0.1:7001
//
// The proxy listens on a free loopback port (Toxiproxy chooses it)
// and prints it as its first stdout line, "listening 127.0.0.1:PORT"; the
// control endpoint also reports it. The control endpoint, loopback only:
//
//	GET /healthz                 200 while the proxy runs
//	GET /addr                    {"addr":"127.0.0.1:PORT","target":"...","delay":"0s","request_delay":"0s","down":false}
//	PUT /delay?d=300ms           delay every server-to-client byte (reply) by d (0s: none)
//	PUT /request-delay?d=300ms   delay every client-to-server byte (command) by d: commands
//	                             land after the client gave up on them (0s: none)
//	PUT /down?v=true|false       drop every connection and refuse new ones, or recover
//
// SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/seckill-oss/seckill/internal/stubhttp"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "faultproxy: %v\n", err)
		os.Exit(1)
	}
}

// run starts the proxy and its control endpoint and returns when ctx is
// cancelled and both have stopped, or when either fails to start.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("faultproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "127.0.0.1:6379", "host:port the proxy forwards to")
	control := fs.String("control", "127.0.0.1:0", "loopback host:port of the HTTP control endpoint")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := requireLoopback(*control); err != nil {
		return fmt.Errorf("-control: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))

	p, err := toxic.New(*target)
	if err != nil {
		return err
	}
	defer p.Close()

	ln, err := net.Listen("tcp", *control)
	if err != nil {
		return fmt.Errorf("control: listen on %s: %w", *control, err)
	}
	srv := &http.Server{Handler: newController(p, *target, log), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening %s\n", p.Addr())
	log.Info("faultproxy running", "addr", p.Addr(), "target", *target, "control", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("control: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// requireLoopback refuses a control address anyone else could reach: the
// endpoint has no authentication and can cut a Redis connection.
func requireLoopback(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", host)
	}
	return nil
}

// controller is the HTTP control endpoint. It remembers the faults it set:
// Toxiproxy reports toxics, not delays.
type controller struct {
	p      *toxic.Proxy
	target string
	log    *slog.Logger

	mu                  sync.Mutex
	delay, requestDelay time.Duration
	down                bool
}

func newController(p *toxic.Proxy, target string, log *slog.Logger) http.Handler {
	c := &controller{p: p, target: target, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		stubhttp.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /addr", c.handleState)
	mux.HandleFunc("PUT /delay", c.handleDelay(func(d time.Duration) { c.delay = d; c.p.SetReplyDelay(d) }, "reply delay set"))
	mux.HandleFunc("PUT /request-delay", c.handleDelay(func(d time.Duration) { c.requestDelay = d; c.p.SetRequestDelay(d) }, "request delay set"))
	mux.HandleFunc("PUT /down", c.handleDown)
	return mux
}

// state is the proxy's address and faults; the caller holds c.mu.
func (c *controller) state() map[string]any {
	return map[string]any{
		"addr": c.p.Addr(), "target": c.target, "down": c.down,
		"delay": c.delay.String(), "request_delay": c.requestDelay.String(),
	}
}

func (c *controller) handleState(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stubhttp.WriteJSON(w, http.StatusOK, c.state())
}

// handleDelay answers a PUT that sets one of the proxy's delays with set.
func (c *controller) handleDelay(set func(time.Duration), logMsg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil || d < 0 {
			stubhttp.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "d must be a non-negative Go duration, e.g. 300ms or 0s"})
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		set(d)
		c.log.Info(logMsg, "delay", d)
		stubhttp.WriteJSON(w, http.StatusOK, c.state())
	}
}

func (c *controller) handleDown(w http.ResponseWriter, r *http.Request) {
	down, err := strconv.ParseBool(r.URL.Query().Get("v"))
	if err != nil {
		stubhttp.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "v must be true or false"})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.p.SetDown(down); err != nil {
		stubhttp.WriteJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	c.down = down
	c.log.Info("down set", "down", down)
	stubhttp.WriteJSON(w, http.StatusOK, c.state())
}
