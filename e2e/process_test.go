package e2e_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// The helpers in this file run the service as it is deployed: the seckill
// binary, built once per test run, as child processes on the real Redis and
// MariaDB. Only a real process can be killed in the middle of a purchase or
// sent SIGTERM during a burst, and only real processes show that nothing is
// shared between instances except Redis and the database.

// processLockTTL is the lease the child processes run with: short, so a
// lock stranded by a killed process frees within the test.
const processLockTTL = 2 * time.Second

var seckillBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// seckillBinary builds cmd/seckill once per test binary (without -race: the
// children are the system under test, not the place to look for races, and
// an instrumented binary is several times slower on this box), with the
// crash points compiled in (internal/crashpoint: inert unless
// SECKILL_CRASHPOINT names one).
func seckillBinary(t testing.TB) string {
	t.Helper()
	seckillBin.once.Do(func() {
		seckillBin.dir, seckillBin.err = os.MkdirTemp("", "seckill-e2e-bin-")
		if seckillBin.err != nil {
			return
		}
		seckillBin.path = filepath.Join(seckillBin.dir, "seckill")
		out, err := exec.Command("go", "build", "-tags", "seckill_crashpoints", "-o", seckillBin.path, "github.com/seckill-oss/seckill/cmd/seckill").CombinedOutput()
		if err != nil {
			seckillBin.err = fmt.Errorf("go build ./cmd/seckill: %w\n%s", err, out)
		}
	})
	if seckillBin.err != nil {
		t.Fatal(seckillBin.err)
	}
	return seckillBin.path
}

// removeSeckillBinary deletes the binary seckillBinary built; TestMain calls
// it after the tests have run.
func removeSeckillBinary() {
	if seckillBin.dir != "" {
		_ = os.RemoveAll(seckillBin.dir)
	}
}

// newProcessStack is a stack whose service runs in child processes: it has
// its own key prefix, database and user stub, and an HTTP client, but no
// in-process service. Point url at a process to use the stack's helpers.
func newProcessStack(t testing.TB, stub usercheck.StubConfig) *stack {
	t.Helper()
	s := &stack{t: t, rdb: testenv.Redis(t), prefix: testenv.Prefix(t), dsn: testenv.MySQLDSN(t)}
	var err error
	if s.db, err = sql.Open("mysql", s.dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.db.Close() })
	if s.stub, err = usercheck.NewStub(stub); err != nil {
		t.Fatal(err)
	}
	s.stubURL = newHTTPServer(t, s.stub)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: checkedTransport(t, &http.Transport{MaxIdleConnsPerHost: 64})}
	t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// processEnv is the environment of a service process on the stack, with
// overrides; the test's own SECKILL_* variables are not passed on.
func (s *stack) processEnv(overrides map[string]string) []string {
	vars := map[string]string{
		"SECKILL_HTTP_ADDR":         "127.0.0.1:0",
		"SECKILL_REDIS_URL":         testenv.RedisURL(s.t),
		"SECKILL_MYSQL_DSN":         s.dsn,
		"SECKILL_USERCHECK_URL":     s.stubURL,
		"SECKILL_ADMIN_TOKEN":       adminToken,
		"SECKILL_KEY_PREFIX":        s.prefix,
		"SECKILL_LOCK_TTL":          processLockTTL.String(),
		"SECKILL_USERCHECK_TIMEOUT": "500ms",
		"SECKILL_LOCK_WAIT":         "1s",
		"SECKILL_SHUTDOWN_TIMEOUT":  "5s",
		// Off unless a test turns it on: most tests show what a fault
		// leaves before anyone repairs it.
		"SECKILL_BOOKS_SWEEP": "0",
	}
	for k, v := range overrides {
		vars[k] = v
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SECKILL_") {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// process is one running seckill child.
type process struct {
	t      testing.TB
	cmd    *exec.Cmd
	stderr *testenv.LogWatch
	done   chan struct{} // closed when the process has exited and been reaped
	url    string        // set by waitReady
}

// spawn starts `seckill serve` without waiting for it; waitReady does. The
// process is stopped (SIGTERM, then SIGKILL) when the test ends, and its log
// is shown if the test failed.
func spawn(t testing.TB, env []string) *process {
	t.Helper()
	p := &process{t: t, stderr: testenv.NewLogWatch(), done: make(chan struct{})}
	p.cmd = exec.Command(seckillBinary(t), "serve")
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start seckill: %v", err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("seckill pid %d log (last lines):\n%s", p.cmd.Process.Pid, p.stderr.Tail(40))
		}
	})
	return p
}

// startProcess starts `seckill serve` and waits until it is ready.
func startProcess(t testing.TB, env []string) *process {
	t.Helper()
	p := spawn(t, env)
	p.waitReady()
	return p
}

// startInstances starts n service processes with env, all at once, waits
// until each is ready, points s at the first and returns a stack per
// process.
func startInstances(t testing.TB, s *stack, n int, env []string) ([]*stack, []*process) {
	t.Helper()
	procs := make([]*process, n)
	for i := range procs {
		procs[i] = spawn(t, env)
	}
	instances := make([]*stack, n)
	for i, p := range procs {
		p.waitReady()
		instances[i] = s.at(p)
	}
	s.url = procs[0].url
	return instances, procs
}

// at returns a copy of the stack pointed at a process.
func (s *stack) at(p *process) *stack {
	c := *s
	c.url = p.url
	return &c
}

// waitReady waits for the process to log its listening address and then to
// answer /readyz with 200.
func (p *process) waitReady() {
	p.t.Helper()
	deadline := time.After(30 * time.Second)
	select {
	case addr := <-p.stderr.Listening():
		p.url = "http://" + addr
	case <-p.done:
		p.t.Fatalf("seckill exited before listening (%v):\n%s", p.cmd.ProcessState, p.stderr.Tail(40))
	case <-deadline:
		p.t.Fatalf("seckill did not log a listening address in 30 s:\n%s", p.stderr.Tail(40))
	}
	for {
		if res, err := http.Get(p.url + "/readyz"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			p.t.Fatalf("seckill exited before it was ready (%v):\n%s", p.cmd.ProcessState, p.stderr.Tail(40))
		case <-deadline:
			p.t.Fatalf("seckill not ready in 30 s:\n%s", p.stderr.Tail(40))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signal sends sig to the process.
func (p *process) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to d for the process to exit and reports whether it did.
func (p *process) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// stop ends the process if it still runs: SIGTERM, then SIGKILL after 10 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if !p.wait(10 * time.Second) {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// reconcileCommand runs `seckill reconcile -activity id` with env and returns
// its JSON report.
func reconcileCommand(t testing.TB, env []string, id int64) (before, after int64) {
	t.Helper()
	cmd := exec.Command(seckillBinary(t), "reconcile", "-activity", strconv.FormatInt(id, 10))
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("seckill reconcile -activity %d: %v\n%s", id, err, stderr.String())
	}
	var r struct {
		ActivityID int64  `json:"activity_id"`
		Before     *int64 `json:"before"` // null: nothing was loaded
		After      int64  `json:"after"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.ActivityID != id {
		t.Fatalf("seckill reconcile -activity %d printed %q: %v", id, stdout.String(), err)
	}
	before = -1
	if r.Before != nil {
		before = *r.Before
	}
	return before, r.After
}
