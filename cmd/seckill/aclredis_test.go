package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/redisacl"
	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// aclAdmin is the administrator's line of the test's own redis-server's
// aclfile: the user who applies the ACL and reads its log.
const (
	aclAdminPassword = "admin-of-the-test"
	aclAdmin         = "user admin on >" + aclAdminPassword + " ~* &* +@all"
)

// ownRedis starts a redis-server of the test's own on a free loopback port,
// no persistence, its users those of aclFile; with certDir,
// it speaks TLS only, with the certificate serverCert wrote there. It is stopped
// when the test ends. It returns the port and an administrator's client.
// The test fails, not skips, without redis-server on PATH: it is the proof
// that the ACL is enough.
func ownRedis(t *testing.T, certDir, aclFile string) (int, *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (apt-get install redis-server): %v", err)
	}
	port, err := redistopo.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--aclfile", aclFile}
	var roots *x509.CertPool
	if certDir != "" {
		roots = certPool(t, certDir)
		all = append(all[2:], "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-auth-clients", "no",
			"--tls-cert-file", filepath.Join(certDir, "cert.pem"), "--tls-key-file", filepath.Join(certDir, "key.pem"))
	}
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
	return port, waitAdmin(t, port, roots, exited, &log)
}

// waitAdmin waits until the server on port answers its administrator.
func waitAdmin(t *testing.T, port int, roots *x509.CertPool, exited <-chan struct{}, log *bytes.Buffer) *redis.Client {
	t.Helper()
	opt := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Username: "admin", Password: aclAdminPassword, MaxRetries: -1}
	if roots != nil {
		opt.TLSConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	admin := redis.NewClient(opt)
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

// redisACL is what `seckill redis-acl` with env and args prints.
func redisACL(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run(context.Background(), append([]string{"seckill", "redis-acl"}, args...), func(k string) string { return env[k] }, &out, &stderr); err != nil {
		t.Fatalf("redis-acl: %v\n%s", err, stderr.String())
	}
	return out.String()
}

// aclFile writes an aclfile of lines and the administrator, returning its
// path.
func aclFile(t *testing.T, lines string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(path, []byte(lines+aclAdmin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyACL applies each ACL SETUSER line `seckill redis-acl` prints with
// env through admin.
func applyACL(t *testing.T, admin *redis.Client, env map[string]string) {
	t.Helper()
	out := redisACL(t, env)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("redis-acl printed %d lines, want 2 users:\n%s", len(lines), out)
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

// serverCert writes a self-signed certificate for 127.0.0.1 and its key,
// cert.pem and key.pem, into a new directory, and returns the directory.
func serverCert(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testenv.SelfSignedFiles(t, dir)
	return dir
}

// certPool trusts the certificate serverCert wrote into dir.
func certPool(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b) {
		t.Fatal("no certificate in cert.pem")
	}
	return roots
}

// composeACLFile is docker-compose.yml's aclfile, with placeholders for the
// passwords' hashes that the redis service fills in at start.
const composeACLFile = "../../deploy/redis/users.acl"

// TestComposeACLFileIsGenerated holds deploy/redis/users.acl to `seckill
// redis-acl -format aclfile` with compose's settings: a command the code
// starts to use is granted in the production block too.
func TestComposeACLFileIsGenerated(t *testing.T) {
	env := map[string]string{"SECKILL_REDIS_SERVICE_PASSWORD": "service", "SECKILL_REDIS_EVENTS_PASSWORD": "events"}
	want := strings.NewReplacer(redisacl.PasswordRule("service"), "#SERVICE_PASSWORD_SHA256",
		redisacl.PasswordRule("events"), "#EVENTS_PASSWORD_SHA256").Replace(redisACL(t, env, "-format", "aclfile"))
	got, err := os.ReadFile(composeACLFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not what `seckill redis-acl -format aclfile` writes; write it again:\n%s", composeACLFile, want)
	}
	compose, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"./deploy/redis/users.acl:/etc/redis/users.acl:ro", "#SERVICE_PASSWORD_SHA256/", "#EVENTS_PASSWORD_SHA256/", `"--aclfile", "/run/redis-acl/users.acl"`} {
		if !strings.Contains(string(compose), s) {
			t.Errorf("docker-compose.yml does not start Redis with the aclfile: no %q", s)
		}
	}
}
