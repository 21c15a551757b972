package order

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// One activity's row held by another transaction delays only that
// activity's writes: B's write, taken by the committer first, leaves the
// group and waits for its row alone, while A's write, behind it, is written
// at once. B is written once its row is free.
//
// Can fail: with the group's locking read waiting (FOR UPDATE without SKIP
// LOCKED), A's write waits behind B's row and ends with its lease ("A's
// write: ... context deadline exceeded").
func TestBusyRowDelaysOnlyItsActivity(t *testing.T) {
	ctx := context.Background()
	s, dsn := openMariaDB(t)
	c := s.Orders.NewCommitter(nil)
	defer c.Close()
	a, b := newActivity(t, s, 10), newActivity(t, s, 10)
	release := testenv.HoldRow(t, dsn, b.ID, 0)

	bDone := make(chan error, 1)
	go func() {
		bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		w, err := c.CreateOrders(bctx, b.ID, 1, batchOf(2))
		if err == nil && len(w.Written) != 1 {
			err = errors.New("B's order not written")
		}
		bDone <- err
	}()
	time.Sleep(200 * time.Millisecond) // B is in the committer's hands (or ahead of A)

	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w, err := c.CreateOrders(actx, a.ID, 1, batchOf(1))
	if err != nil || len(w.Written) != 1 {
		t.Fatalf("A's write: %+v, %v; want it written while B's row is held", w, err)
	}
	select {
	case err := <-bDone:
		t.Fatalf("B's write ended while its row was held: %v", err)
	default:
	}
	release()
	if err := <-bDone; err != nil {
		t.Fatalf("B's write after its row was freed: %v", err)
	}
	if count(t, s, a.ID) != 1 || count(t, s, b.ID) != 1 || sold(t, s, a.ID) != 1 || sold(t, s, b.ID) != 1 {
		t.Errorf("books: A %d orders sold %d, B %d orders sold %d; want 1 each", count(t, s, a.ID), sold(t, s, a.ID), count(t, s, b.ID), sold(t, s, b.ID))
	}
}

// A group whose member's lease ends after the claim still writes the
// others: a nearly spent lease does not cancel the group. Here the first
// group (activity D) is held open until A and C both wait, so they share
// the next group, and C's lease ends as that group's claim is sent, after
// its locking read found the lease live.
//
// Can fail: with the group's transaction ending when any member's context
// ends, A's write fails with C's "context canceled".
func TestEndedLeaseDoesNotCancelTheGroup(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		d, a, cAct := newActivity(t, s, 10), newActivity(t, s, 10), newActivity(t, s, 10)
		gate := make(chan struct{})
		cctx, cancelC := context.WithCancel(ctx)
		defer cancelC()
		var claims int
		var mu sync.Mutex
		err := s.db.Callback().Raw().Before("gorm:raw").Register("test:gate", func(tx *gorm.DB) {
			if !strings.Contains(tx.Statement.SQL.String(), "SET sold = sold + CASE") { // the group's claim
				return
			}
			mu.Lock()
			claims++
			n := claims
			mu.Unlock()
			switch n {
			case 1:
				<-gate
			case 2:
				cancelC()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		c := s.Orders.NewCommitter(nil)
		defer c.Close()
		var wg sync.WaitGroup
		var dErr, aErr, cErr error
		var aBatch Batch
		wg.Go(func() { _, dErr = c.CreateOrders(ctx, d.ID, 1, batchOf(1)) })
		time.Sleep(200 * time.Millisecond) // D's group waits at the gate
		wg.Go(func() { aBatch, aErr = c.CreateOrders(ctx, a.ID, 1, batchOf(2)) })
		wg.Go(func() { _, cErr = c.CreateOrders(cctx, cAct.ID, 1, batchOf(3)) })
		time.Sleep(200 * time.Millisecond) // both wait for the committer
		close(gate)
		wg.Wait()
		if dErr != nil {
			t.Fatalf("D's write: %v", dErr)
		}
		if aErr != nil || len(aBatch.Written) != 1 {
			t.Fatalf("A's write: %+v, %v; want it written though C's lease ended in the group", aBatch, aErr)
		}
		// C claimed before its lease ended: its order is written with the
		// group, or (had C been alone) it failed and wrote nothing.
		if n := count(t, s, cAct.ID); (cErr == nil) != (n == 1) || sold(t, s, cAct.ID) != n {
			t.Errorf("C: %v with %d orders, sold %d", cErr, n, sold(t, s, cAct.ID))
		}
	})
}

// A group's COMMIT fails with an unknown outcome (the connection is killed
// between the insert and the COMMIT; the server rolls back). A member that
// wrote something cannot know; a member that wrote nothing knows exactly
// what it would have known alone: its orders over the total are Over, those
// a unique key kept out are Taken. Only a member kept out by a sibling's row
// of the same transaction (one buyer, one idempotency key, two activities)
// does not know, since that row exists only if the COMMIT landed.
//
// Can fail: with the group's ErrCommitUnknown given to every member, the
// sold-out one is told 503 instead of sold_out ("over: ... commit outcome
// unknown").
func TestUnknownCommitLeavesMembersThatWroteNothingExact(t *testing.T) {
	ctx := context.Background()
	s, dsn := openMariaDB(t)
	killer := killerOf(t, dsn)
	fine, over, kept, first, second := newActivity(t, s, 10), newActivity(t, s, 1), newActivity(t, s, 10), newActivity(t, s, 10), newActivity(t, s, 10)
	if err := buy(s, over.ID, 1, 1, ""); err != nil { // over is sold out
		t.Fatal(err)
	}
	if err := buy(s, kept.ID, 3, 1, ""); err != nil { // user 3 holds an order of kept
		t.Fatal(err)
	}
	err := s.db.Callback().Raw().Before("gorm:raw").Register("test:kill_before_commit", func(tx *gorm.DB) {
		if tx.Statement.SQL.String() == "COMMIT" {
			killConnection(t, tx, killer)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	keyed := func(user int64, key string) []seckill.Order {
		return []seckill.Order{{UserID: user, IdempotencyKey: key}}
	}
	res := s.Orders.CreateOrderGroup(ctx, []Write{
		{ActivityID: fine.ID, Fence: 2, Orders: batchOf(1)},
		{ActivityID: over.ID, Fence: 2, Orders: batchOf(2)},
		{ActivityID: kept.ID, Fence: 2, Orders: batchOf(3)},
		{ActivityID: first.ID, Fence: 2, Orders: keyed(4, "k")},
		{ActivityID: second.ID, Fence: 2, Orders: keyed(4, "k")},
	})
	if !errors.Is(res[0].Err, ErrCommitUnknown) {
		t.Errorf("fine: %+v, want ErrCommitUnknown", res[0])
	}
	if res[1].Err != nil || len(res[1].Batch.Over) != 1 {
		t.Errorf("over: %+v, want its order Over", res[1])
	}
	if res[2].Err != nil || len(res[2].Batch.Taken) != 1 {
		t.Errorf("kept: %+v, want its order Taken", res[2])
	}
	if !errors.Is(res[3].Err, ErrCommitUnknown) || !errors.Is(res[4].Err, ErrCommitUnknown) {
		t.Errorf("one key in two activities: %+v, %+v; want ErrCommitUnknown for both", res[3], res[4])
	}
	for _, a := range []seckill.Activity{fine, first, second} {
		if n := count(t, killer, a.ID); n != 0 {
			t.Errorf("activity %d: %d orders after a COMMIT that did not land", a.ID, n)
		}
	}
}
