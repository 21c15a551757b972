package main

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
)

// aclAdminPassword is the default user's password on the test's own
// redis-server: the administrator who applies the ACL.
const aclAdminPassword = "admin-of-the-test"

// ownRedis starts a redis-server of the test's own on a free loopback port,
// no persistence, its default user behind aclAdminPassword, with args after
// those; it is stopped when the test ends. It returns the port and an
// administrator's client. The test fails, not skips, without redis-server
// on PATH: it is the proof that the ACL is enough.
func ownRedis(t *testing.T, args ...string) (int, *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (apt-get install redis-server): %v", err)
	}
	port, err := redistopo.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--requirepass", aclAdminPassword}, args...)
	cmd := exec.Command(bin, all...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return port, waitAdmin(t, port, exited, &log)
}

// waitAdmin waits until the server on port answers its administrator.
func waitAdmin(t *testing.T, port int, exited <-chan struct{}, log *bytes.Buffer) *redis.Client {
	t.Helper()
	admin := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Password: aclAdminPassword, MaxRetries: -1})
	t.Cleanup(func() { _ = admin.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for admin.Ping(context.Background()).Err() != nil {
		select {
		case <-exited:
			t.Fatalf("redis-server exited:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server does not answer after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return admin
}

// applyACL runs `seckill redis-acl` with env and applies each ACL SETUSER
// line it prints through admin.
func applyACL(t *testing.T, admin *redis.Client, env map[string]string) {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run(context.Background(), []string{"seckill", "redis-acl"}, func(k string) string { return env[k] }, &out, &stderr); err != nil {
		t.Fatalf("redis-acl: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("redis-acl printed %d lines, want 2 users:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		words := strings.Fields(l)
		if len(words) < 3 || words[0] != "ACL" || words[1] != "SETUSER" {
			t.Fatalf("not an ACL SETUSER line: %q", l)
		}
		args := []any{"acl", "setuser"}
		for _, w := range words[2:] {
			args = append(args, w)
		}
		if err := admin.Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("%s: %v", words[2], err)
		}
	}
}

// aclLog is the server's ACL LOG: every command, key or channel it refused.
func aclLog(t *testing.T, admin *redis.Client) []any {
	t.Helper()
	entries, err := admin.Do(context.Background(), "acl", "log").Slice()
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
