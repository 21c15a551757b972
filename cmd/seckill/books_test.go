package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// runBooks runs `seckill books` with args and returns its output and the
// exit status main would give it.
func runBooks(t *testing.T, env map[string]string, args ...string) (booksOutput, int) {
	t.Helper()
	var out, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"seckill", "books"}, args...), func(k string) string { return env[k] }, &out, &stderr)
	var got booksOutput
	if out.Len() > 0 {
		if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
			t.Fatalf("books output %q: %v", out.String(), jerr)
		}
	}
	return got, exitStatus(err)
}

// checksFailed are the checks the output's violations name.
func checksFailed(out booksOutput) string {
	var checks []string
	for _, v := range out.Violations {
		checks = append(checks, v.Check)
	}
	return strings.Join(checks, ",")
}

// seckill books on the real MariaDB and Redis: balanced books exit 0; an
// order row written behind the activity's back, a wrong stock in Redis and
// a user with two orders each exit 1 naming the check; an unknown activity
// or no Redis exit 2.
func TestBooksCommand(t *testing.T) {
	ctx := context.Background()
	dsn, rdb, prefix := testenv.MySQLDSN(t), testenv.Redis(t), testenv.Prefix(t)
	env := map[string]string{"SECKILL_REDIS_URL": testenv.RedisURL(t), "SECKILL_MYSQL_DSN": dsn, "SECKILL_KEY_PREFIX": prefix}
	orders, err := order.Open(ctx, dsn, order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	stocks := stock.New(rdb, keys.NewSpace(prefix))
	now := time.Now().UTC()
	var ids []int64
	for range 2 {
		a, err := orders.Activities.CreateActivity(ctx, seckill.Activity{Name: "books", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := orders.Orders.CreateOrders(ctx, a.ID, 1, []seckill.Order{{UserID: 1}, {UserID: 2}}); err != nil || len(b.Written) != 2 {
			t.Fatalf("two orders: %+v, %v", b, err)
		}
		if err := stocks.Load(ctx, a.ID, 3, 1); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	act := ids[0]
	one := fmt.Sprint(act)

	out, code := runBooks(t, env)
	if code != 0 || !out.Balanced || len(out.Activities) != 2 || out.Activities[0].Held != 2 || *out.Activities[0].RedisRemaining != 3 {
		t.Fatalf("balanced books: exit %d, %+v", code, out)
	}
	if out, code := runBooks(t, env, "-activity", fmt.Sprintf("%d,%d", ids[1], ids[1]), "-activity", one); code != 0 || len(out.Activities) != 2 {
		t.Fatalf("books -activity both: exit %d, %+v", code, out)
	}

	if err := stocks.Load(ctx, act, 4, 2); err != nil {
		t.Fatal(err)
	}
	if out, code := runBooks(t, env, "-activity", one); code != 1 || checksFailed(out) != seckill.CheckImbalance ||
		!strings.Contains(out.Violations[0].Message, "2 units held by orders + 4 remaining in Redis != total 5") {
		t.Fatalf("a unit too many in Redis: exit %d, %+v", code, out)
	}
	if err := stocks.Load(ctx, act, 3, 3); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	insert := func(id string, user int64) {
		t.Helper()
		if _, err := db.Exec("INSERT INTO orders (id, activity_id, user_id, status, fence, created_at) VALUES (?, ?, ?, 'created', 9, ?)", id, act, user, now); err != nil {
			t.Fatal(err)
		}
	}
	insert("behind-the-back", 3)
	if out, code := runBooks(t, env, "-activity", one); code != 1 || checksFailed(out) != seckill.CheckImbalance+","+seckill.CheckSold {
		t.Fatalf("an order row not counted sold: exit %d, %+v", code, out)
	}
	if _, err := db.Exec("DELETE FROM orders WHERE id = 'behind-the-back'"); err != nil {
		t.Fatal(err)
	}
	// The unique key keeps a second order of a user out; only without it
	// can the check be seen catching one.
	if _, err := db.Exec("ALTER TABLE orders ADD INDEX activity_only (activity_id), DROP INDEX uq_orders_activity_user"); err != nil {
		t.Fatal(err)
	}
	insert("second-of-user-1", 1)
	if out, code := runBooks(t, env, "-activity", one); code != 1 || !strings.Contains(checksFailed(out), seckill.CheckDuplicateUsers) {
		t.Fatalf("user 1 twice: exit %d, %+v", code, out)
	}

	if _, code := runBooks(t, env, "-activity", "999999"); code != 2 {
		t.Errorf("an unknown activity: exit %d, want 2", code)
	}
	if _, code := runBooks(t, env, "-activity", "x"); code != 2 {
		t.Errorf("a bad id: exit %d, want 2", code)
	}
	noRedis := map[string]string{"SECKILL_REDIS_URL": "redis://127.0.0.1:1/0", "SECKILL_MYSQL_DSN": dsn}
	if _, code := runBooks(t, noRedis); code != 2 {
		t.Errorf("no Redis: exit %d, want 2", code)
	}
}
