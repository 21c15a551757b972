package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// A rediss:// SECKILL_REDIS_URL is taken by serve's configuration and its
// client speaks TLS to a Redis that requires it (a redis-server of this
// test's own with a TLS port only and a password).
func TestRedissConnects(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server")
	}
	dir := t.TempDir()
	pool := testenv.SelfSignedFiles(t, dir)
	port := freePort(t, 6390, 6499)
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "cert.pem"), "--tls-key-file", filepath.Join(dir, "key.pem"),
		"--tls-ca-cert-file", filepath.Join(dir, "cert.pem"), "--tls-auth-clients", "no",
		"--requirepass", "tls-test-password", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	for _, tc := range []struct {
		url   string
		works bool
	}{
		{fmt.Sprintf("rediss://:tls-test-password@127.0.0.1:%d/0", port), true},
		{fmt.Sprintf("redis://:tls-test-password@127.0.0.1:%d/0", port), false}, // plain, to a TLS port
	} {
		cfg, err := loadServe(serveEnv(map[string]string{"SECKILL_REDIS_URL": tc.url}))
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if cfg.Redis.single.TLSConfig != nil {
			cfg.Redis.single.TLSConfig.RootCAs = pool // the test's own CA
		}
		rdb := cfg.Redis.client()
		var pingErr error
		deadline := time.Now().Add(10 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			pingErr = rdb.Ping(ctx).Err()
			cancel()
			if pingErr == nil || !tc.works || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = rdb.Close()
		if (pingErr == nil) != tc.works {
			t.Errorf("%s: PING: %v, want it to work: %v", tc.url, pingErr, tc.works)
		}
	}
}

// freePort is a port in lo..hi nobody listens on.
func freePort(t *testing.T, lo, hi int) int {
	t.Helper()
	for p := lo; p <= hi; p++ {
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			_ = l.Close()
			return p
		}
	}
	t.Fatalf("no free port in %d..%d", lo, hi)
	return 0
}
