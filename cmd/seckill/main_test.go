package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode) // as main does
	os.Exit(m.Run())
}

// process is one run() of the command in the background, as a test sees it.
type process struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan error
	stdout *syncBuffer
	stderr *testenv.LogWatch
}

// start runs the command with env as its whole environment.
func start(t *testing.T, env map[string]string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{t: t, cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: testenv.NewLogWatch()}
	getenv := func(k string) string { return env[k] }
	go func() {
		p.done <- run(ctx, append([]string{"seckill"}, args...), getenv, p.stdout, p.stderr)
		close(p.done)
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// addr waits for the "listening" log line and returns its address.
func (p *process) addr() string {
	p.t.Helper()
	select {
	case a := <-p.stderr.Listening():
		return a
	case err := <-p.done:
		p.t.Fatalf("exited before listening: %v\nstderr:\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		p.t.Fatalf("not listening after 30s\nstderr:\n%s", p.stderr)
	}
	return ""
}

// stop cancels the run, as SIGTERM does, and returns what run returned.
func (p *process) stop() error {
	p.cancel()
	select {
	case err := <-p.done: // nil once closed: a second stop
		return err
	case <-time.After(30 * time.Second):
		p.t.Fatalf("still running 30s after cancel\nstderr:\n%s", p.stderr)
		return nil
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// call makes one HTTP request and decodes the JSON answer into a map. The
// answer must match docs/openapi.yaml.
func call(t *testing.T, method, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: checkedTransport(t, &http.Transport{DisableKeepAlives: true})}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &v) != nil {
		t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: checkedTransport(t, &http.Transport{DisableKeepAlives: true})}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

func TestUnknownCommand(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"seckill", "sell"}, func(string) string { return "" }, io.Discard, &stderr)
	if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "usage: seckill") {
		t.Fatalf("run sell = %v, stderr %q", err, stderr.String())
	}
}
