package order

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// On Galera, a batch's transaction whose write set conflicts with one
// committed on another node first is refused at COMMIT (1213): a rollback,
// so ErrConflict, not ErrCommitUnknown, and nothing was written. Here the
// batch writes on node 2 while, between its insert and its COMMIT, node 3
// commits a change to the same activity row.
//
// Can fail: with 1213 treated as any COMMIT error, "CreateOrders: ... commit
// outcome unknown ..., want ErrConflict".
func TestCertificationConflictIsARollback(t *testing.T) {
	g := testenv.GaleraCluster(t)
	ctx := context.Background()
	// Nodes 2 and 3: the e2e failover tests may be killing node 1, or
	// restarting the whole cluster, meanwhile. Both must be synced in one
	// cluster, or a write on node 3 need not meet node 2's at all.
	g.WaitSynced(t, 1, 2)
	s, err := Open(ctx, g.Nodes[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// wsrep_sync_wait: node 3 applies what node 2 committed (the activity)
	// before its UPDATE, which otherwise may find no row, write nothing and
	// conflict with nothing.
	other, err := sql.Open("mysql", g.Nodes[2]+"&wsrep_sync_wait=3")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	galeraAttempts(t, g, s, func(a seckill.Activity) (check func()) {
		err := s.db.Callback().Raw().Before("gorm:raw").Register("test:conflict", func(tx *gorm.DB) {
			if !beforeCommit(tx) {
				return
			}
			res, err := other.Exec("UPDATE activities SET name = 'changed on node 3' WHERE id = ?", a.ID)
			if err != nil {
				t.Errorf("the conflicting write on node 3: %v", err)
				return
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Errorf("the conflicting write on node 3 changed %d rows, want 1", n)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Orders.CreateOrders(ctx, a.ID, 1, batchOf(1, 2))
		if rerr := s.db.Callback().Raw().Remove("test:conflict"); rerr != nil {
			t.Fatal(rerr)
		}
		return func() {
			if !errors.Is(err, ErrConflict) || errors.Is(err, ErrCommitUnknown) {
				t.Fatalf("CreateOrders: %v, want ErrConflict", err)
			}
			if n := count(t, s, a.ID); n != 0 {
				t.Fatalf("%d orders after a refused write set, want 0", n)
			}
		}
	})
}

// The look-up after a COMMIT of unknown outcome, on Galera, when HAProxy has
// moved the writes to another node meanwhile: the batch's transaction sits
// on node 2, its orders inserted and its COMMIT in flight, while Written
// reads on node 3, where node 2's row lock does not reach. Written finds the
// order absent, so the batch's COMMIT must then be refused, or the buyer
// told "nothing was sold" holds an order (chaos campaign 5311 at 1500 s: node
// 2, the writer, became an IST donor, and HAProxy moved the writes to node
// 3).
//
// Can fail: without Written's write to the activity's row (fenceOut), the
// batch commits: "the batch's COMMIT landed after Written found its order
// absent".
func TestWrittenFencesOutACommitInFlightOnAnotherNode(t *testing.T) {
	g := testenv.GaleraCluster(t)
	ctx := context.Background()
	writer, reader := writerAndReader(t, g)
	galeraAttempts(t, g, writer, func(a seckill.Activity) (check func()) {
		o, err := fill(seckill.Order{ActivityID: a.ID, UserID: 1, Fence: 1})
		if err != nil {
			t.Fatal(err)
		}
		row := writer.Orders.newOrderRow(o)
		batch := writer.db.Begin()
		if err := lockActivity(batch, writer.dialect, a.ID, "id", &activityRow{}); err != nil {
			t.Fatal(err)
		}
		if err := batch.Exec("UPDATE activities SET sold = sold + 1, fence = 1 WHERE id = ?", a.ID).Error; err != nil {
			t.Fatal(err)
		}
		if err := batch.Create(&row).Error; err != nil {
			t.Fatal(err)
		}
		found, _, err := reader.Orders.Written(ctx, a.ID, []string{row.ID})
		if err != nil {
			_ = batch.Rollback()
			t.Fatalf("Written on node 3: %v", err)
		}
		commitErr := batch.Commit().Error
		return func() {
			if len(found) != 0 {
				t.Fatalf("Written on node 3 found the order of a transaction not committed on node 2")
			}
			if commitErr == nil {
				t.Fatalf("the batch's COMMIT landed after Written found its order absent")
			}
			if n := count(t, reader, a.ID); n != 0 {
				t.Fatalf("%d orders after Written found none and the batch was refused, want 0", n)
			}
		}
	})
}

// The same look-up for a status change (OrderLocked, after a payment's
// COMMIT of unknown outcome), when HAProxy has moved the writes meanwhile:
// the payment's transaction sits on node 2, its order paid and its COMMIT in
// flight, while OrderLocked reads on node 3. A payment writes only the
// order's row, so the activity's row would not fence it out: OrderLocked
// finds the order created, and the payment's COMMIT must then be refused,
// or the verification decides on a status that is no longer the order's.
//
// Can fail: without OrderLocked's write to the order's row (fenceOut), the
// payment commits: "the payment's COMMIT landed after OrderLocked found the
// order created".
func TestOrderLockedFencesOutAChangeInFlightOnAnotherNode(t *testing.T) {
	g := testenv.GaleraCluster(t)
	ctx := context.Background()
	writer, reader := writerAndReader(t, g)
	galeraAttempts(t, g, writer, func(a seckill.Activity) (check func()) {
		b, err := writer.Orders.CreateOrders(ctx, a.ID, 1, batchOf(1))
		if err != nil || len(b.Written) != 1 {
			t.Fatalf("CreateOrders: %+v, %v", b, err)
		}
		o := b.Written[0]
		payment := writer.db.Begin()
		res := payment.Exec(changeStatus, seckill.OrderStatusPaid, time.Now().UTC(), nil, 5, o.ID, a.ID, seckill.OrderStatusCreated, 5)
		if res.Error != nil || res.RowsAffected != 1 {
			t.Fatalf("the payment's UPDATE on node 2: %d rows, %v", res.RowsAffected, res.Error)
		}
		found, err := reader.Orders.OrderLocked(ctx, a.ID, o.ID)
		if err != nil {
			_ = payment.Rollback()
			t.Fatalf("OrderLocked on node 3: %v", err)
		}
		commitErr := payment.Commit().Error
		return func() {
			if found.Status != seckill.OrderStatusCreated {
				t.Fatalf("OrderLocked on node 3 found %s, the status of a transaction not committed on node 2", found.Status)
			}
			if commitErr == nil {
				t.Fatalf("the payment's COMMIT landed after OrderLocked found the order created")
			}
			got, err := reader.Orders.OrderByID(ctx, o.ID)
			if err != nil || got.Status != seckill.OrderStatusCreated || got.StatusFence != o.StatusFence {
				t.Fatalf("after the payment was refused: %+v, %v; want created, fence %d", got, err, o.StatusFence)
			}
		}
	})
}

// writerAndReader opens a store on node 2, the writer, and one on node 3
// that reads causally: node 3 first applies what node 2 committed (the
// schema's version, the activity), once both are synced.
func writerAndReader(t *testing.T, g testenv.Galera) (writer, reader *Store) {
	t.Helper()
	ctx := context.Background()
	g.WaitSynced(t, 1, 2)
	writer, err := Open(ctx, g.Nodes[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = writer.Close() })
	reader, err = Open(ctx, g.Nodes[2]+"&wsrep_sync_wait=1", Options{SkipMigrations: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	return writer, reader
}

// galeraAttempts runs attempt on a new activity of s's, then the check it
// returns, once the cluster stayed the same while attempt's writes ran: a
// node that left or joined meanwhile means the writes were not certified
// against each other, which is not what the tests are about. The third
// attempt is checked whatever the cluster did.
func galeraAttempts(t *testing.T, g testenv.Galera, s *Store, attempt func(a seckill.Activity) (check func())) {
	t.Helper()
	for n := 1; ; n++ {
		conf := g.WaitSynced(t, 1, 2)
		check := attempt(newActivity(t, s, 10))
		if g.ConfID(t, 1) != conf && n < 3 {
			t.Logf("attempt %d: the cluster changed during the writes; again", n)
			continue
		}
		check()
		return
	}
}
