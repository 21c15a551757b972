package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheck asks this container's own service whether it is ready, for a
// Docker HEALTHCHECK in an image without a shell or curl (distroless). It
// exits 0 when GET /readyz answers 200, 1 otherwise.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "URL to probe (default: /readyz on SECKILL_HTTP_ADDR's port on 127.0.0.1)")
	timeout := fs.Duration("timeout", 3*time.Second, "deadline of the probe")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	target := *url
	if target == "" {
		var err error
		if target, err = localReadyURL(envOr(getenv, "SECKILL_HTTP_ADDR", settingDefault("SECKILL_HTTP_ADDR"))); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused; the status is the answer
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d", target, resp.StatusCode)
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}

// localReadyURL is /readyz on the loopback address of a listen address: a
// wildcard host (":8080", "0.0.0.0:8080", "[::]:8080") becomes 127.0.0.1.
func localReadyURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", errors.New("healthcheck: SECKILL_HTTP_ADDR is not host:port")
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
