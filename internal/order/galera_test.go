package order

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"gorm.io/gorm"

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
	for attempt := 1; ; attempt++ {
		conf := g.WaitSynced(t, 1, 2)
		a := newActivity(t, s, 10)
		err = s.db.Callback().Create().After("gorm:create").Register("test:conflict", func(tx *gorm.DB) {
			if !lastInsert(tx) {
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
		_, err = s.CreateOrders(ctx, a.ID, 1, batchOf(1, 2))
		if rerr := s.db.Callback().Create().Remove("test:conflict"); rerr != nil {
			t.Fatal(rerr)
		}
		if err == nil && attempt < 3 && g.ConfID(t, 1) != conf {
			// A node left or joined while the two writes ran: they were
			// not certified against each other. Not what this test is about.
			t.Logf("attempt %d: the cluster changed during the writes; again", attempt)
			continue
		}
		if !errors.Is(err, ErrConflict) || errors.Is(err, ErrCommitUnknown) {
			t.Fatalf("CreateOrders: %v, want ErrConflict", err)
		}
		if n := count(t, s, a.ID); n != 0 {
			t.Fatalf("%d orders after a refused write set, want 0", n)
		}
		return
	}
}
