package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/crashpoint"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// waitBooksBalance waits until the activity's books (seckill.Books) of
// total units balance, and returns the audit then, failing the test when
// that takes more than booksHealWithin from since, or at once on an
// oversell, which never heals.
func (s *stack) waitBooksBalance(act, total int64, since time.Time) audit {
	s.t.Helper()
	for {
		b := s.books(act)
		vs := b.Violations()
		switch {
		case b.Oversold() > 0:
			s.t.Fatalf("oversold: %v", vs)
		case len(vs) == 0 && b.TotalStock == total:
			return s.audit(act)
		case time.Since(since) > booksHealWithin:
			s.t.Fatalf("books of %d units still off %v: %+v: %v", total, booksHealWithin, b, vs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// booksHealWithin is the promise: after a crash the books balance
// again within this long, with nobody running reconcile.
const booksHealWithin = 30 * time.Second

// A real service process is killed with SIGKILL at each step where a crash
// leaves Redis's stock off from total - sold: after a batch's deduct and
// before its orders are written; after its orders committed and before
// anyone was answered; after an unpaid order's expiry committed and before
// its unit went back. A process started after it (the same one restarted,
// with the default SECKILL_BOOKS_SWEEP) repairs the books on its own within
// booksHealWithin; a crash after the commit has nothing to repair, and the
// repair returns nothing (nothing is sold twice). The rest of the sale then
// sells exactly the stock.
//
// Can fail: with the survivor's sweep off (SECKILL_BOOKS_SWEEP=0), "books
// still off 30s: 0 orders + 4 in Redis != 5" in the subtests
// purchase.after_deduct and payment.after_expiry_commit.
func TestBooksBalanceAfterACrashAtEachStep(t *testing.T) {
	for _, point := range []string{crashpoint.AfterDeduct, crashpoint.AfterCommit, crashpoint.AfterExpiry} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			crashAndHeal(t, point)
		})
	}
}

func crashAndHeal(t *testing.T, point string) {
	const total = 5
	s := newProcessStack(t, usercheck.StubConfig{})
	victimEnv := map[string]string{"SECKILL_CRASHPOINT": point, "SECKILL_BOOKS_SWEEP": "0"}
	survivorEnv := map[string]string{"SECKILL_BOOKS_SWEEP": ""} // the default
	var payStub *payment.Stub
	if point == crashpoint.AfterExpiry {
		// Payments on, with a window of a second: the order is never paid.
		var payments map[string]string
		payStub, payments = s.pricedPayments("1s")
		for k, v := range payments {
			victimEnv[k], survivorEnv[k] = v, v
		}
	}
	victim := startProcess(t, s.processEnv(victimEnv))
	s.url = victim.url
	act := s.createActivity(total)

	// The purchase that dies: its answer is a cut connection, or for the
	// expiry a 201 and then the delay queue's expiry one window later.
	req, err := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", victim.url, act), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-User-ID", "1")
	res, err := s.client.Do(req)
	if err == nil {
		_ = res.Body.Close()
	}
	if !victim.wait(20 * time.Second) {
		t.Fatalf("the process did not die at %s (first answer %v, %v)", point, res, err)
	}
	crashed := time.Now()

	survivor := startProcess(t, s.processEnv(survivorEnv))
	s.url = survivor.url
	s.waitBooksBalance(act, total, crashed)
	healed := time.Since(crashed)
	if point == crashpoint.AfterCommit {
		// The order committed: two more sweeps must not give its unit back.
		time.Sleep(12 * time.Second)
		if again := s.audit(act); again.Orders != 1 || again.RedisRemaining != total-1 {
			t.Fatalf("after more sweeps: %+v, want the committed order's unit still sold", again)
		}
	}
	var sold, rows int64
	if err := s.db.QueryRow("SELECT sold FROM activities WHERE id = ?", act).Scan(&sold); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ? AND status IN ('created','paid')", act).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if sold != rows {
		t.Fatalf("activities.sold %d, orders holding a unit %d", sold, rows)
	}
	// The rest of the sale sells exactly the stock (with payments on, to
	// buyers who pay before the window ends).
	rest := runSale(t, func(a, u int64) response {
		r := s.buy(a, u, nil)
		if id, ok := r.body["order_id"].(string); ok && r.status == http.StatusCreated && point == crashpoint.AfterExpiry {
			payStub.SetPayment(id, payment.PaymentPaid)
		}
		return r
	}, act, 2*total, 4, 1000)
	if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ? AND status IN ('created','paid')", act).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != total {
		t.Errorf("%d orders hold a unit after the sale, want %d", rows, total)
	}
	for id := range rest.created {
		var n int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE id = ?", id).Scan(&n); err != nil || n != 1 {
			t.Errorf("201 for order %s has no row (%v)", id, err)
		}
	}
	if a := s.audit(act); a.Oversold || !a.Consistent || a.Orders != total {
		t.Errorf("audit after the sale: %+v", a)
	}
	t.Logf("crash at %s: books balanced %v after it, with no command; then %v", point, healed.Round(100*time.Millisecond), rest.statuses)
}
