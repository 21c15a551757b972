package e2e_test

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// SIGTERM while a purchase is held in verification, with a shutdown timeout
// far shorter than the verification: the connection is cut at the timeout,
// but the process closes Redis and the database only after the purchase's
// batch has finished, so nothing is half done: the order is written (the
// verification passes) and the books balance without reconciliation, with no
// lock left behind.
//
// Can fail: with the stores closed without waiting (the Service's Close
// taken out of the backend's), the batch writes to a closed database and
// cannot return its unit to a closed Redis: "1 orders + 4 in Redis" or a unit
// missing from the books, and the batch's lock left to its TTL.
func TestSIGTERMShorterThanAPurchase(t *testing.T) {
	const verification = 1500 * time.Millisecond
	s := newProcessStack(t, usercheck.StubConfig{Latency: verification})
	p := startProcess(t, s.processEnv(map[string]string{
		"SECKILL_SHUTDOWN_TIMEOUT":  "200ms",
		"SECKILL_LOCK_TTL":          "4s",
		"SECKILL_USERCHECK_TIMEOUT": "3s",
	}))
	s.url = p.url
	const total = 5
	act := s.createActivity(total)

	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	sent := time.Now()
	go func() {
		status, _, _, err := post(s.client, p.url, act, 1)
		done <- result{status, err}
	}()
	time.Sleep(verification / 3) // the purchase is in verification
	p.signal(syscall.SIGTERM)
	r := <-done
	if r.err == nil && r.status != http.StatusCreated {
		t.Errorf("purchase cut by the shutdown: %d, want a cut connection or 201", r.status)
	}
	if !p.wait(30 * time.Second) {
		t.Fatal("process still running 30 s after SIGTERM")
	}
	exited := time.Since(sent)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %v after SIGTERM, want 0", p.cmd.ProcessState)
	}
	if exited < verification {
		t.Errorf("the process exited %v after the purchase began, before its %v verification ended", exited, verification)
	}
	orders, remaining := s.checkBooksDirect(act, total, nil)
	if orders != 1 {
		t.Errorf("%d orders, want the held purchase's one (remaining %d)", orders, remaining)
	}
	if held := s.heldLocks([]int64{act}); len(held) > 0 {
		t.Errorf("lock of activity %d left in Redis after the shutdown", act)
	}
	t.Logf("client saw %v / %d; process exited %v after the purchase began; %d orders, %d in Redis",
		r.err, r.status, exited.Round(time.Millisecond), orders, remaining)
}
