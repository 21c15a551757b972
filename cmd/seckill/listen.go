package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/seckill-oss/seckill/internal/httpapi"
)

// listeners are the service's HTTP servers: the public one, and with
// SECKILL_ADMIN_ADDR a second one for the ops API, /metrics and pprof.
type listeners struct {
	ln, adminLn net.Listener // adminLn nil: one listener
	srv, admin  *http.Server
}

// listen opens the listeners of cfg and builds their servers.
func listen(ctx context.Context, cfg config, apiCfg httpapi.Config, deps httpapi.Deps, log *slog.Logger) (*listeners, error) {
	var lc net.ListenConfig
	l := &listeners{}
	var public, ops http.Handler
	if cfg.AdminAddr == "" {
		public = httpapi.NewServer(apiCfg, deps)
	} else {
		public, ops = httpapi.NewServers(apiCfg, deps)
	}
	ln, err := lc.Listen(ctx, "tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, listenError("SECKILL_HTTP_ADDR", cfg.HTTPAddr, err)
	}
	l.ln = ln
	l.srv = newHTTPServer(public, 15*time.Second+cfg.LockWait+cfg.LockTTL, log)
	if cfg.HTTP2Cleartext {
		if err := httpapi.ServeH2C(l.srv); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	if ops != nil {
		if l.adminLn, err = lc.Listen(ctx, "tcp", cfg.AdminAddr); err != nil {
			_ = ln.Close()
			return nil, listenError("SECKILL_ADMIN_ADDR", cfg.AdminAddr, err)
		}
		// Long enough for a CPU profile or trace of up to a minute.
		l.admin = newHTTPServer(ops, 75*time.Second, log)
	}
	return l, nil
}

// listenError says which variable's address could not be listened on, and
// when its port is taken, that it is.
func listenError(name, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s=%q: the port is taken: another process already listens on %s; stop it, or set %s to another port: %w", name, addr, addr, name, err)
	}
	return fmt.Errorf("%s=%q: cannot listen: %w", name, addr, err)
}

func newHTTPServer(h http.Handler, writeTimeout time.Duration, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// Public: longer than the slowest purchase (lock wait + lease + database).
		WriteTimeout:   writeTimeout,
		IdleTimeout:    60 * time.Second,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// adminAddr is the admin listener's address for the log, "" without one.
func (l *listeners) adminAddr() string {
	if l.adminLn == nil {
		return ""
	}
	return l.adminLn.Addr().String()
}

// serve serves both listeners until ctx ends, then shuts both down as
// serveUntil does. One failing stops the other.
func (l *listeners) serve(ctx context.Context, timeout, drain time.Duration, log *slog.Logger) error {
	if l.admin == nil {
		return serveUntil(ctx, l.srv, l.ln, timeout, drain, log)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var adminErr error
	wg.Go(func() {
		adminErr = serveUntil(ctx, l.admin, l.adminLn, timeout, drain, log)
		cancel()
	})
	err := serveUntil(ctx, l.srv, l.ln, timeout, drain, log)
	cancel()
	wg.Wait()
	if adminErr != nil {
		adminErr = fmt.Errorf("admin listener: %w", adminErr)
	}
	return errors.Join(err, adminErr)
}

// close closes listeners that were never served (an early return of serve's
// caller); after serve they are closed already and this does nothing.
func (l *listeners) close() {
	_ = l.ln.Close()
	if l.adminLn != nil {
		_ = l.adminLn.Close()
	}
}
