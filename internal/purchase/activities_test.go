package purchase_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/migrations"
)

// countingStore is an in-memory order store that counts the database
// reads made through it.
func countingStore(t *testing.T) (*order.Store, *atomic.Int64) {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, ":memory:?_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: it is the ":memory:" database
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	t.Cleanup(func() { _ = db.Close() })
	if err := migrations.Apply(context.Background(), db, migrations.SQLite); err != nil {
		t.Fatal(err)
	}
	gdb, err := gorm.Open(&sqlite.Dialector{Conn: db}, &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	count := func(*gorm.DB) { reads.Add(1) }
	if err := gdb.Callback().Query().Before("gorm:query").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	if err := gdb.Callback().Row().Before("gorm:row").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	if err := gdb.Callback().Raw().Before("gorm:raw").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	return order.New(gdb), &reads
}

// Probing unknown activity ids costs the database next to nothing: the
// first miss costs two queries (the id, then the highest id there is), and
// every id above the highest is then answered from memory for a second,
// whatever the id: a walk over 200 ids costs nothing more.
//
// Can fail: with each id remembered alone, the walk costs 200 queries.
func TestUnknownActivityIDsCostTwoQueriesASecond(t *testing.T) {
	orders, reads := countingStore(t)
	f := newFixtureOn(t, orders)
	svc, c := f.svc, f.clock
	ctx := context.Background()

	// The first activity of an empty database will be id 1.
	before := reads.Load()
	for range 50 {
		if _, err := svc.Activity(ctx, 1); code(err) != seckill.EActivityNotFound {
			t.Fatalf("Activity(1) of an empty database: %v, want activity_not_found", err)
		}
	}
	if _, err := svc.Buy(ctx, seckill.BuyRequest{ActivityID: 1, UserID: 7}); code(err) != seckill.EActivityNotFound {
		t.Fatalf("Buy of an unknown activity: %v, want activity_not_found", err)
	}
	for id := int64(2); id < 202; id++ {
		if _, err := svc.Activity(ctx, id); code(err) != seckill.EActivityNotFound {
			t.Fatalf("Activity(%d) of an empty database: %v, want activity_not_found", id, err)
		}
	}
	if n := reads.Load() - before; n != 2 {
		t.Errorf("50 reads and a purchase of an unknown id, then a walk over 200 ids: %d database queries, want 2", n)
	}
	c.Add(time.Second)
	before = reads.Load()
	if _, err := svc.Activity(ctx, 1); code(err) != seckill.EActivityNotFound {
		t.Fatalf("Activity(1) a second later: %v", err)
	}
	if n := reads.Load() - before; n != 2 {
		t.Errorf("a second later: %d database queries, want the database asked again (2)", n)
	}

	now := c.Now()
	a, err := svc.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 3, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil || a.ID != 1 {
		t.Fatalf("CreateActivity = %+v, %v; want id 1", a, err)
	}
	if v, err := svc.Activity(ctx, 1); err != nil || v.ID != 1 {
		t.Errorf("Activity(1) just after its creation here: %+v, %v; want found", v, err)
	}
	// One created elsewhere (not through this service's cache) is found
	// within a second.
	other, err := orders.Activities.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: 3, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second)
	if v, err := svc.Activity(ctx, other.ID); err != nil || v.ID != other.ID {
		t.Errorf("Activity(%d), created on another instance, a second later: %+v, %v; want found", other.ID, v, err)
	}
}
