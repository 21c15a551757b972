package order

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// One transaction carries four grants' batches: one whose fence is stale,
// one for an activity that does not exist, one whose every order a unique
// key keeps out, and one that is fine. The refused ones change nothing of
// their activities; the fine one is written as if it were alone.
func TestGroupRefusedFenceNeitherLosesNorBlocksOthers(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		stale, fine, kept := newActivity(t, s, 10), newActivity(t, s, 10), newActivity(t, s, 10)
		if err := buy(s, stale.ID, 1, 10, ""); err != nil { // a newer grant (10) wrote
			t.Fatal(err)
		}
		if err := buy(s, kept.ID, 7, 2, ""); err != nil { // user 7 holds an order of kept
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res := s.Orders.CreateOrderGroup(ctx, []Write{
			{ActivityID: stale.ID, Fence: 5, Orders: batchOf(2, 3)},
			{ActivityID: 999999, Fence: 5, Orders: batchOf(4)},
			{ActivityID: kept.ID, Fence: 6, Orders: batchOf(7)},
			{ActivityID: fine.ID, Fence: 3, Orders: batchOf(5, 6)},
		})
		if !errors.Is(res[0].Err, ErrStaleFence) {
			t.Errorf("stale grant: %+v, want ErrStaleFence", res[0])
		}
		if !errors.Is(res[1].Err, ErrActivityNotFound) {
			t.Errorf("missing activity: %+v, want ErrActivityNotFound", res[1])
		}
		if res[2].Err != nil || len(res[2].Batch.Taken) != 1 || len(res[2].Batch.Written) != 0 {
			t.Errorf("kept-out batch: %+v, want its one order taken", res[2])
		}
		if res[3].Err != nil || len(res[3].Batch.Written) != 2 {
			t.Fatalf("fine batch: %+v, want 2 orders written", res[3])
		}
		for _, o := range res[3].Batch.Written {
			if o.Fence != 3 || o.ActivityID != fine.ID {
				t.Errorf("written %+v: want fence 3 in activity %d", o, fine.ID)
			}
		}
		for _, c := range []struct {
			a                  seckill.Activity
			orders, sold, fenc int64
		}{{stale, 1, 1, 10}, {kept, 1, 1, 2}, {fine, 2, 2, 3}} {
			f, err := s.Activities.Fence(ctx, c.a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n, sd := count(t, s, c.a.ID), sold(t, s, c.a.ID); n != c.orders || sd != c.sold || f != c.fenc {
				t.Errorf("activity %d: %d orders, sold %d, fence %d; want %d, %d, %d", c.a.ID, n, sd, f, c.orders, c.sold, c.fenc)
			}
		}
	})
}

// Concurrent callers of a Committer, each for its own activity, share
// transactions; the one whose fence is stale is refused alone and the
// others' orders are all written.
func TestCommitterRefusesOnlyTheStaleGrant(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		var groups []int
		var mu sync.Mutex
		c := s.Orders.NewCommitter(func(n int, _ time.Duration) { mu.Lock(); groups = append(groups, n); mu.Unlock() })
		defer c.Close()
		const n = 12
		acts := make([]seckill.Activity, n)
		for i := range acts {
			acts[i] = newActivity(t, s, 100)
		}
		if err := buy(s, acts[0].ID, 1, 50, ""); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for round := range 5 {
			for i := range acts {
				wg.Go(func() {
					user := int64(1000*i + 10*round + 2)
					_, errs[i] = c.CreateOrders(context.Background(), acts[i].ID, int64(10+round), batchOf(user, user+1))
				})
			}
			wg.Wait()
			if !errors.Is(errs[0], ErrStaleFence) {
				t.Errorf("round %d: stale grant got %v, want ErrStaleFence", round, errs[0])
			}
			for i, err := range errs[1:] {
				if err != nil {
					t.Errorf("round %d: activity %d: %v", round, acts[i+1].ID, err)
				}
			}
		}
		for i, a := range acts[1:] {
			if got := count(t, s, a.ID); got != 10 {
				t.Errorf("activity %d (%d): %d orders, want 10", a.ID, i+1, got)
			}
		}
		if got := count(t, s, acts[0].ID); got != 1 {
			t.Errorf("the stale grants' activity has %d orders, want the 1 written before", got)
		}
		// Two grants of one activity at once: never in one group; the older
		// one is refused when the newer wrote first, and nothing is lost.
		a := newActivity(t, s, 100)
		var older, newer error
		wg.Go(func() { _, older = c.CreateOrders(context.Background(), a.ID, 100, batchOf(1)) })
		wg.Go(func() { _, newer = c.CreateOrders(context.Background(), a.ID, 101, batchOf(2)) })
		wg.Wait()
		want := int64(2)
		if errors.Is(older, ErrStaleFence) {
			want = 1
		} else if older != nil {
			t.Errorf("older grant of one activity: %v", older)
		}
		if newer != nil {
			t.Errorf("newer grant of one activity: %v", newer)
		}
		if got := count(t, s, a.ID); got != want {
			t.Errorf("two grants of one activity: %d orders, want %d", got, want)
		}
		t.Logf("group sizes: %v", groups)
	})
}

// A group locks only its own activities' rows, also on a table whose
// statistics are too fresh to know its rows (activities created just before
// the sale): a full scan there would lock the row of another activity, held
// here by another transaction, and the group would wait for it.
func TestGroupLocksOnlyItsActivities(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testenv.MySQLDSN(t))
	acts := make([]seckill.Activity, 22)
	for i := range acts {
		acts[i] = newActivity(t, s, 100)
	}
	other := s.db.Begin()
	defer other.Rollback()
	var row activityRow
	if err := other.Raw("SELECT id FROM activities WHERE id = ? FOR UPDATE", acts[0].ID).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	var writes []Write
	for i, a := range acts[1:12] {
		writes = append(writes, Write{ActivityID: a.ID, Fence: 1, Orders: batchOf(int64(i + 1))})
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for i, r := range s.Orders.CreateOrderGroup(wctx, writes) {
		if r.Err != nil || len(r.Batch.Written) != 1 {
			t.Errorf("activity %d: %+v; want its order written without waiting for another activity's row lock", writes[i].ActivityID, r)
		}
	}
}

// A panic in a group's write answers its members (the outcome of their
// COMMIT unknown, so they look it up) and leaves the committer writing the
// next groups.
func TestCommitterSurvivesAPanic(t *testing.T) {
	s, err := Open(context.Background(), "sqlite::memory:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var once sync.Once
	c := s.Orders.NewCommitter(func(int, time.Duration) { once.Do(func() { panic("boom") }) })
	defer c.Close()
	a := newActivity(t, s, 10)
	if _, err := c.CreateOrders(context.Background(), a.ID, 1, batchOf(1)); !errors.Is(err, ErrCommitUnknown) {
		t.Errorf("write whose group panicked: %v, want ErrCommitUnknown", err)
	}
	b, err := c.CreateOrders(context.Background(), a.ID, 2, batchOf(2))
	if err != nil || len(b.Written) != 1 {
		t.Errorf("write after the panic: %+v, %v; want it written", b, err)
	}
}
