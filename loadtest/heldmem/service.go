package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// service is the one instance under measure, started by this program so
// that its Redis traffic goes through the counting proxy.
type service struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	base   string        // the public listener
	ops    string        // the admin listener: the ops API, /metrics, pprof
	token  string
	http   *http.Client
}

// startService runs bin serve with this process's environment (the
// script's SECKILL_* settings), listening on a free loopback port and
// reaching Redis at redisAddr, its output in logPath; it returns once
// /readyz answers.
func startService(bin, redisAddr, logPath string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	opsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "SECKILL_HTTP_ADDR=127.0.0.1:"+port, "SECKILL_ADMIN_ADDR=127.0.0.1:"+opsPort,
		"SECKILL_REDIS_URL=redis://"+redisAddr+"/0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &service{cmd: cmd, exited: make(chan struct{}), base: "http://127.0.0.1:" + port,
		ops:   "http://127.0.0.1:" + opsPort,
		token: os.Getenv("SECKILL_ADMIN_TOKEN"), http: &http.Client{Timeout: 10 * time.Second}}
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(s.exited) }()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if resp, err := s.http.Get(s.base + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("the service exited before it was ready (its log: %s)", logPath)
		default:
		}
	}
	s.stop()
	return nil, fmt.Errorf("the service did not become ready (its log: %s)", logPath)
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}

// stop sends SIGTERM (held requests are answered at once) and waits for
// the exit, killing the process after 20 s.
func (s *service) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// call sends a JSON request and decodes a 2xx answer into out.
func (s *service) call(method, path string, user int64, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	base := s.base
	if strings.HasPrefix(path, "/admin/") || strings.HasPrefix(path, "/debug/") {
		base = s.ops
	}
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, rd)
	if err != nil {
		return err
	}
	if base == s.ops {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if user != 0 {
		req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b
		return nil
	}
	return json.Unmarshal(b, out)
}

// createRoom creates an activity whose waiting room is open and whose
// sale starts in two hours, and preloads it: every joined user then stays
// in the pre-queue, so a held request is answered only when its wait ends.
func (s *service) createRoom() (int64, error) {
	now := time.Now().UTC().Truncate(time.Second)
	var act struct {
		ID int64 `json:"id"`
	}
	err := s.call(http.MethodPost, "/admin/v1/activities", 0, map[string]any{
		"name": "held requests", "total_stock": 1000,
		"starts_at": now.Add(2 * time.Hour), "ends_at": now.Add(3 * time.Hour),
		"waiting_room": map[string]any{"opens_at": now.Add(-time.Second)},
	}, &act)
	if err != nil {
		return 0, err
	}
	return act.ID, s.call(http.MethodPost, fmt.Sprintf("/admin/v1/activities/%d/preload", act.ID), 0, nil, nil)
}

// runtimeMemory is what the service's /metrics says of its own memory.
type runtimeMemory struct {
	Goroutines int64 `json:"goroutines"`
	HeapInuse  int64 `json:"heap_inuse_kb"`
	StackInuse int64 `json:"stack_inuse_kb"`
}

// memory reads go_goroutines and the heap and stack in use from /metrics.
func (s *service) memory() (runtimeMemory, error) {
	resp, err := s.http.Get(s.ops + "/metrics")
	if err != nil {
		return runtimeMemory{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	var m runtimeMemory
	fields := map[string]*int64{"go_goroutines": &m.Goroutines,
		"go_memstats_heap_inuse_bytes": &m.HeapInuse, "go_memstats_stack_inuse_bytes": &m.StackInuse}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if p := fields[name]; ok && p != nil {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return m, fmt.Errorf("/metrics %s: %w", name, err)
			}
			*p = int64(f)
		}
	}
	m.HeapInuse /= 1024
	m.StackInuse /= 1024
	return m, sc.Err()
}

// afterGC has the instance collect its garbage (pprof's heap profile
// with gc=1) and then reads its memory: what the held requests keep live.
// The profile goes to profilePath unless it is "".
func (s *service) afterGC(profilePath string) (runtimeMemory, error) {
	var profile []byte
	if err := s.call(http.MethodGet, "/debug/pprof/heap?gc=1", 0, nil, &profile); err != nil {
		return runtimeMemory{}, err
	}
	if profilePath != "" {
		if err := os.WriteFile(profilePath, profile, 0o644); err != nil {
			return runtimeMemory{}, err
		}
	}
	return s.memory()
}

// rssKB reads VmRSS of the process from /proc.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}
