package e2e_test

// The tests in this file run the service as it is deployed: the seckill
// binary, built once per test run, as child processes on the real Redis and
// MariaDB. Only a real process can be killed in the middle of a purchase or
// sent SIGTERM during a burst, and only real processes show that nothing is
// shared between instances except Redis and the database.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

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

// attempt is one purchase request of a burst and what came of it.
type attempt struct {
	activity, user int64
	sent, answered time.Time
	status         int
	code, orderID  string
	err            error // transport error or an answer that is not JSON
}

// tryBuy sends one purchase and returns what happened, transport errors
// included: the tests here cut the server off on purpose.
func tryBuy(client *http.Client, url string, activity, user int64) attempt {
	a := attempt{activity: activity, user: user, sent: time.Now()}
	a.status, a.code, a.orderID, a.err = post(client, url, activity, user)
	a.answered = time.Now()
	return a
}

func post(client *http.Client, url string, activity, user int64) (status int, code, orderID string, err error) {
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", url, activity), nil)
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	res, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", "", fmt.Errorf("read %d answer: %w", res.StatusCode, err)
	}
	r := response{status: res.StatusCode, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		return 0, "", "", fmt.Errorf("%d answer is not JSON: %q", res.StatusCode, raw)
	}
	orderID, _ = r.body["order_id"].(string)
	return r.status, r.code(), orderID, nil
}

// burst sends purchases from workers goroutines, each attempt by a new user,
// spread over the activities, until stop is closed; after a transport error
// a worker pauses briefly rather than spin on a dead port.
type burst struct {
	mu       sync.Mutex
	attempts []attempt
	wg       sync.WaitGroup
}

func startBurst(client *http.Client, url string, activities []int64, workers int, firstUser int64, stop <-chan struct{}) *burst {
	return buyers(client, url, activities, workers, firstUser, stop, false)
}

// buyers starts workers that each buy, as a new user every time, one of the
// activities, until stop is closed; with untilSoldOut, a worker also drops an
// activity once it is told sold_out, and stops when none is left.
func buyers(client *http.Client, url string, activities []int64, workers int, firstUser int64, stop <-chan struct{}, untilSoldOut bool) *burst {
	b := &burst{}
	var next atomic.Int64
	next.Store(firstUser)
	for range workers {
		b.wg.Go(func() {
			open := slices.Clone(activities)
			for len(open) > 0 {
				select {
				case <-stop:
					return
				default:
				}
				u := next.Add(1)
				a := tryBuy(client, url, open[int(u)%len(open)], u)
				b.mu.Lock()
				b.attempts = append(b.attempts, a)
				b.mu.Unlock()
				switch {
				case a.err != nil:
					time.Sleep(50 * time.Millisecond)
				case untilSoldOut && a.code == "sold_out":
					open = slices.DeleteFunc(open, func(id int64) bool { return id == a.activity })
				}
			}
		})
	}
	return b
}

// finish waits for the workers and returns every attempt.
func (b *burst) finish() []attempt {
	b.wg.Wait()
	return b.attempts
}

// created returns the orders answered 201 for the activity, as order -> user.
func created(attempts []attempt, activity int64) map[string]int64 {
	m := map[string]int64{}
	for _, a := range attempts {
		if a.err == nil && a.status == http.StatusCreated && a.activity == activity {
			m[a.orderID] = a.user
		}
	}
	return m
}

// summary counts the attempts by answer ("201", an error code, or "error").
func summary(attempts []attempt) map[string]int {
	m := map[string]int{}
	for _, a := range attempts {
		switch {
		case a.err != nil:
			m["error"]++
		case a.status == http.StatusCreated:
			m["201"]++
		default:
			m[a.code]++
		}
	}
	return m
}

// waitForOrders waits until the activities hold at least n orders in all.
func (s *stack) waitForOrders(activities []int64, n int, within time.Duration) {
	s.t.Helper()
	args := []any{}
	for _, a := range activities {
		args = append(args, a)
	}
	q := "SELECT COUNT(*) FROM orders WHERE activity_id IN (?" + strings.Repeat(",?", len(activities)-1) + ")"
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var got int
		if err := s.db.QueryRow(q, args...).Scan(&got); err != nil {
			s.t.Fatal(err)
		}
		if got >= n {
			return
		}
	}
	s.t.Fatalf("fewer than %d orders after %v", n, within)
}

// waitForUnitsInTransit waits until at least n units of the activities are
// deducted in Redis without their order in the database yet, and returns how
// many it saw. Redis is read before the database, so a commit in between
// makes it undercount, never overcount.
func (s *stack) waitForUnitsInTransit(activities []int64, total int64, n int64, within time.Duration) int64 {
	s.t.Helper()
	st := stock.New(s.rdb, keys.NewSpace(s.prefix))
	ctx := context.Background()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var remaining, orders int64
		for _, a := range activities {
			r, err := st.Remaining(ctx, a)
			if err != nil {
				s.t.Fatal(err)
			}
			remaining += r
		}
		for _, a := range activities {
			var c int64
			if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ?", a).Scan(&c); err != nil {
				s.t.Fatal(err)
			}
			orders += c
		}
		if got := total*int64(len(activities)) - remaining - orders; got >= n {
			return got
		}
	}
	s.t.Fatalf("never saw %d units between Redis and the database in %v", n, within)
	return 0
}

// checkBooksDirect checks the invariants in MariaDB and Redis themselves,
// for when no service is left to ask: the books (seckill.Books: no
// oversell, nobody with two orders, orders + Redis remaining == total, sold
// == orders) and every 201 has its row. It returns the orders holding a
// unit and the Redis remaining.
func (s *stack) checkBooksDirect(activity, total int64, createdOrders map[string]int64) (orders, remaining int64) {
	s.t.Helper()
	b := s.books(activity)
	if b.TotalStock != total {
		s.t.Errorf("activity %d has %d units, want %d", activity, b.TotalStock, total)
	}
	for _, v := range b.Violations() {
		s.t.Errorf("books: %s", v)
	}
	rows := s.ordersInDB(activity)
	for id, u := range createdOrders {
		if rows[u] == 0 {
			s.t.Errorf("activity %d: 201 for order %s of user %d has no row", activity, id, u)
		}
	}
	return b.Held, b.RedisRemaining
}

// awaitLockFree fails the test unless activity a's lock key is gone within
// 5 s. The queue's leader drops its hold right after it answers, not
// before: the key may outlive the last 201 by a moment, never by a TTL.
func (s *stack) awaitLockFree(a int64) {
	s.t.Helper()
	for gone := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := s.rdb.Exists(context.Background(), keys.NewSpace(s.prefix).Lock(a)).Result()
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(gone) {
			s.t.Fatalf("activity %d's lock still held 5 s after the sale (%d, %v): stranded until its TTL", a, n, err)
		}
	}
}

// heldLocks returns the activities whose lock key exists in Redis.
func (s *stack) heldLocks(activities []int64) []int64 {
	s.t.Helper()
	var held []int64
	for _, a := range activities {
		n, err := s.rdb.Exists(context.Background(), keys.NewSpace(s.prefix).Lock(a)).Result()
		if err != nil {
			s.t.Fatal(err)
		}
		if n > 0 {
			held = append(held, a)
		}
	}
	return held
}

// A service process is killed with SIGKILL while purchases are inside the
// activities' locks, some of them between the deduct in Redis and the
// commit of their order (the database answers slowly through a proxy to
// widen that window). The locks it held free within their TTL, a restarted
// process sells again once they have, `seckill reconcile` returns the units
// the dead process deducted without an order, and after that the sale
// completes with exactly the stock sold.
//
// Can fail: skipping the reconcile step fails the books check whenever the
// kill leaked a unit (run with the reconcile step removed: "reconcile
// returned 0 units, the audits showed 2 leaked", "activity 2: 19
// orders + 0 in Redis, total 20: books do not balance" after the sale).
func TestProcessKilledMidPurchase(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{Latency: 30 * time.Millisecond})
	cfg, err := mysql.ParseDSN(s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	dbProxy := proxy(t, cfg.Addr)
	cfg.Addr = dbProxy.Addr()
	victimEnv := s.processEnv(map[string]string{"SECKILL_MYSQL_DSN": cfg.FormatDSN()})
	// The successor waits little for a busy lock, so a purchase while a
	// dead holder's lock lingers answers busy well within the lock's TTL.
	env := s.processEnv(map[string]string{"SECKILL_LOCK_WAIT": "200ms"})

	victim := startProcess(t, victimEnv)
	s.url = victim.url
	const total = 20
	activities := []int64{s.createActivity(total), s.createActivity(total), s.createActivity(total), s.createActivity(total)}
	// Each order's transaction is four round trips; at 40 ms a reply, a
	// purchase spends most of its time between deduct and commit.
	dbProxy.SetReplyDelay(40 * time.Millisecond)

	stop := make(chan struct{})
	load := startBurst(s.client, victim.url, activities, 16, 0, stop)
	s.waitForOrders(activities, 4, 15*time.Second)
	inTransit := s.waitForUnitsInTransit(activities, total, 2, 15*time.Second)
	close(stop)
	victim.signal(syscall.SIGKILL)
	killed := time.Now()
	if !victim.wait(5 * time.Second) {
		t.Fatal("SIGKILLed process did not exit")
	}
	attempts := load.finish()
	held := s.heldLocks(activities)
	if len(held) == 0 {
		t.Fatal("no lock was held when the process died: the kill did not land mid-purchase")
	}

	// A new process on the same Redis keys and database.
	successor := startProcess(t, env)
	s.url = successor.url
	var blocked []string
	for _, a := range s.heldLocks(held) {
		r := s.buy(a, 1_000_000+a, nil)
		blocked = append(blocked, fmt.Sprintf("activity %d: %d %s", a, r.status, r.code()))
	}
	for len(s.heldLocks(held)) > 0 {
		if time.Since(killed) > processLockTTL+300*time.Millisecond {
			t.Fatalf("locks of activities %v still held %v after the kill; TTL %v", s.heldLocks(held), time.Since(killed), processLockTTL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	freed := time.Since(killed)
	for _, a := range held {
		if r := s.buy(a, 2_000_000+a, nil); r.status != http.StatusCreated {
			t.Errorf("activity %d: purchase after its lock freed: %d %s", a, r.status, r.raw)
		}
	}

	// What the dead process leaked, and what reconciliation gives back.
	var leaked, returned int64
	for _, a := range activities {
		au := s.audit(a)
		if au.Oversold || au.Orders+au.RedisRemaining > total {
			t.Errorf("activity %d after the kill: %+v: more stock than units", a, au)
		}
		leaked += total - au.Orders - au.RedisRemaining
		before, after := reconcileCommand(t, env, a)
		returned += after - before
	}
	if leaked == 0 {
		t.Error("the kill leaked no unit: reconciliation was not put to the test")
	}
	if returned != leaked {
		t.Errorf("reconcile returned %d units, the audits showed %d leaked", returned, leaked)
	}

	// The rest of the sale, with the returned units, sells exactly the stock.
	if err := s.stub.SetConfig(usercheck.StubConfig{}); err != nil {
		t.Fatal(err)
	}
	for i, a := range activities {
		rest := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, a, 2*total, 4, int64(3_000_000+i*1000))
		orders := created(attempts, a)
		for id, u := range rest.created {
			orders[id] = u
		}
		if got, _ := s.checkBooksDirect(a, total, orders); got != total {
			t.Errorf("activity %d: %d sold in all, want %d", a, got, total)
		}
		s.checkBooks(a, total, nil)
	}
	t.Logf("killed with %d units seen in transit and locks held on %d of %d activities; successor while held: %v; locks freed %v after the kill (TTL %v); "+
		"%d units leaked, reconcile returned %d; answers before the kill %v",
		inTransit, len(held), len(activities), blocked, freed.Round(time.Millisecond), processLockTTL, leaked, returned, summary(attempts))
}

// SIGTERM during a burst of purchases: every request the process had
// accepted before the signal gets a real answer (no connection reset), the
// process exits 0 within its shutdown timeout, no lock is left in Redis and
// the books balance with no reconciliation.
//
// Can fail: sent SIGKILL instead of SIGTERM (the graceful shutdown taken
// away), it reports accepted requests cut off ("connection reset by peer" /
// EOF), a non-zero exit and lock keys left behind.
func TestSIGTERMDuringBurst(t *testing.T) {
	const shutdownTimeout = 5 * time.Second
	// Verifications take 400 ms, so each batch runs for longer than the
	// 200 ms that makes a request "accepted before the signal", and some are
	// always in flight when it comes. Their deadline is a full second: on a
	// loaded machine a 400 ms answer can pass 500 ms, and a verification
	// that times out is a 503 the shutdown did not cause.
	s := newProcessStack(t, usercheck.StubConfig{Latency: 400 * time.Millisecond})
	p := startProcess(t, s.processEnv(map[string]string{"SECKILL_SHUTDOWN_TIMEOUT": shutdownTimeout.String(),
		"SECKILL_USERCHECK_TIMEOUT": "1s"}))
	s.url = p.url
	const total = 15
	activities := []int64{s.createActivity(total), s.createActivity(total), s.createActivity(total), s.createActivity(total)}

	stop := make(chan struct{})
	load := startBurst(s.client, p.url, activities, 24, 0, stop)
	s.waitForOrders(activities, 12, 15*time.Second)
	// A batch just committed and its buyers' next requests went out with
	// it: signal while they are half-way through their verification.
	time.Sleep(250 * time.Millisecond)
	p.signal(syscall.SIGTERM)
	signalled := time.Now()
	// Buyers keep coming for a moment after the signal; the process must
	// stop taking them, not crash under them.
	time.Sleep(200 * time.Millisecond)
	close(stop)
	exited := p.wait(2 * shutdownTimeout)
	attempts := load.finish()
	if !exited {
		t.Fatalf("process still running %v after SIGTERM", 2*shutdownTimeout)
	}
	took := time.Since(signalled)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %v after SIGTERM, want 0", p.cmd.ProcessState)
	}
	if took > shutdownTimeout {
		t.Errorf("exit %v after SIGTERM, past the shutdown timeout %v", took, shutdownTimeout)
	}

	// Accepted before the signal: sent well before it, so the server had
	// read the request when it stopped listening.
	acceptedBy := signalled.Add(-200 * time.Millisecond)
	inFlight, cut := 0, 0
	drained := map[string]int{}
	for _, a := range attempts {
		if !a.sent.Before(acceptedBy) {
			continue
		}
		if a.answered.After(signalled) {
			inFlight++
			if a.err == nil {
				drained[strconv.Itoa(a.status)+" "+a.code]++
			}
		}
		switch {
		case a.err != nil:
			cut++
			if cut <= 5 {
				t.Errorf("user %d, sent %v before the signal: %v", a.user, signalled.Sub(a.sent).Round(time.Millisecond), a.err)
			}
		case a.status != http.StatusCreated && a.status != http.StatusConflict && a.status != http.StatusTooManyRequests:
			t.Errorf("user %d, accepted before the signal: %d %s", a.user, a.status, a.code)
		}
	}
	if cut > 0 {
		t.Errorf("%d requests accepted before the signal got no answer", cut)
	}
	if inFlight == 0 {
		t.Error("no request was in flight at the signal: the test shows nothing")
	}
	if held := s.heldLocks(activities); len(held) > 0 {
		t.Errorf("locks of activities %v left in Redis after a graceful exit", held)
	}
	var sold int64
	for _, a := range activities {
		n, _ := s.checkBooksDirect(a, total, created(attempts, a))
		sold += n
	}
	t.Logf("exit %v, %v after SIGTERM; %d requests in flight at the signal answered %v; %d units sold; all answers %v",
		p.cmd.ProcessState, took.Round(time.Millisecond), inFlight, drained, sold, summary(attempts))
}

// Three service processes, started at the same moment on a fresh database
// (their migrations race) and sharing Redis and MariaDB, sell one activity
// together: exactly its stock, each buyer at most once.
//
// Its books checks are the ones TestSeedHandlerOversells shows failing. Run
// on the seed's handler behind the service's API (loadtest/naiveserver; half
// the verifications 300 ms against its 166 ms lock, Redis 1 ms away, 200
// buyers at once) it did not oversell in two runs:
// across processes the seed's race needs more concurrent holders than this
// sale makes, so this test is evidence of sharing, not of a guard.
func TestSeveralProcessesOneActivity(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{Latency: 2 * time.Millisecond})
	env := s.processEnv(map[string]string{"SECKILL_LOCK_WAIT": "200ms"})
	procs := []*process{spawn(t, env), spawn(t, env), spawn(t, env)}
	for _, p := range procs {
		p.waitReady()
	}
	s.url = procs[0].url
	const total = 60
	act := s.createActivity(total)

	instances := make([]*stack, len(procs))
	for i, p := range procs {
		c := *s
		c.url = p.url
		instances[i] = &c
	}
	var n atomic.Int64
	var perProcess [3]atomic.Int64
	res := runSale(t, func(a, u int64) response {
		i := n.Add(1) % 3
		r := instances[i].buy(a, u, nil)
		if r.status == http.StatusCreated {
			perProcess[i].Add(1)
		}
		return r
	}, act, 300, 30, 1)

	if got := len(res.created); got != total {
		t.Errorf("%d sold, want %d: %v", got, total, res.statuses)
	}
	s.checkBooks(act, total, res)
	s.checkBooksDirect(act, total, res.created)
	sold := []int64{perProcess[0].Load(), perProcess[1].Load(), perProcess[2].Load()}
	// Which process wins the lock is up to the scheduler; that at least two
	// of them sold shows the sale really ran across processes.
	if slices.Max(sold) == total {
		t.Errorf("one process sold everything (%v): the sale was not shared", sold)
	}
	t.Logf("orders per process %v; answers %v", sold, res.statuses)
}
