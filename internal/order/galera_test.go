package order

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill/internal/testenv"
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
	s, err := Open(ctx, g.Nodes[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Nodes 2 and 3: the e2e failover test may be killing node 1 meanwhile.
	other, err := sql.Open("mysql", g.Nodes[2])
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a := newActivity(t, s, 10)
	err = s.db.Callback().Create().After("gorm:create").Register("test:conflict", func(*gorm.DB) {
		if _, err := other.Exec("UPDATE activities SET name = 'changed on node 3' WHERE id = ?", a.ID); err != nil {
			t.Errorf("the conflicting write on node 3: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateOrders(ctx, a.ID, 1, batchOf(1, 2))
	if !errors.Is(err, ErrConflict) || errors.Is(err, ErrCommitUnknown) {
		t.Fatalf("CreateOrders: %v, want ErrConflict", err)
	}
	if err := s.db.Callback().Create().Remove("test:conflict"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, a.ID); n != 0 {
		t.Fatalf("%d orders after a refused write set, want 0", n)
	}
}
