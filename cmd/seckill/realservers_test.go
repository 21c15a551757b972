package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The command on the real Redis and MariaDB: migrate, shutdown, a smoke sale.

func TestMigrateMariaDB(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	env := map[string]string{"SECKILL_MYSQL_DSN": dsn}
	for i := range 2 { // the second run finds nothing to do
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"seckill", "migrate"}, func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
			t.Fatalf("migrate run %d: %v\nstderr:\n%s", i+1, err, stderr.String())
		}
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	err = db.QueryRow(`SELECT COUNT(*) FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name IN ('activities', 'orders')`).Scan(&tables)
	if err != nil || tables != 2 {
		t.Fatalf("after migrate: %d of the tables activities, orders (err %v)", tables, err)
	}

	err = run(context.Background(), []string{"seckill", "migrate"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SECKILL_MYSQL_DSN is unset") {
		t.Fatalf("migrate without a DSN = %v", err)
	}
}

// createAndPreload creates an activity on sale now and loads its stock.
func createAndPreload(t *testing.T, base string, admin map[string]string, total int) int64 {
	t.Helper()
	now := time.Now().UTC()
	code, act := call(t, "POST", base+"/admin/v1/activities", admin, fmt.Sprintf(
		`{"name":"smoke","total_stock":%d,"price_minor":100,"currency":"CNY","starts_at":%q,"ends_at":%q}`,
		total, now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, act)
	}
	id := int64(act["id"].(float64))
	if code, v := call(t, "POST", fmt.Sprintf("%s/admin/v1/activities/%d/preload", base, id), admin, ""); code != http.StatusOK || v["remaining_stock"] != float64(total) {
		t.Fatalf("preload: %d %v", code, v)
	}
	return id
}

// realEnv is the service's environment on the test's real Redis and MariaDB,
// with a verification stub answering after stubLatency.
func realEnv(t *testing.T, stubLatency time.Duration) map[string]string {
	t.Helper()
	prefix := testenv.Prefix(t)
	stub := start(t, nil, "userstub", "-addr", "127.0.0.1:0", "-latency", stubLatency.String())
	return map[string]string{
		"SECKILL_HTTP_ADDR":     "127.0.0.1:0",
		"SECKILL_REDIS_URL":     testenv.RedisURL(t),
		"SECKILL_KEY_PREFIX":    prefix,
		"SECKILL_MYSQL_DSN":     testenv.MySQLDSN(t),
		"SECKILL_USERCHECK_URL": "http://" + stub.addr(),
		"SECKILL_ADMIN_TOKEN":   "test-" + prefix,
	}
}

// TestShutdownFinishesInFlight shows SIGTERM's promise: a purchase under way
// when the signal comes is answered, and its lock released, before run returns.
func TestShutdownFinishesInFlight(t *testing.T) {
	env := realEnv(t, 300*time.Millisecond)
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	id := createAndPreload(t, base, map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}, 1)

	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id), nil)
		req.Header.Set("X-User-ID", "7")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	// The batch takes the activity's lock before it asks the stub, which
	// answers 300 ms later: once the lock exists the purchase is under way.
	rdb := testenv.Redis(t)
	lockKey := keys.NewSpace(env["SECKILL_KEY_PREFIX"]).Lock(id)
	for deadline := time.Now().Add(20 * time.Second); rdb.Exists(context.Background(), lockKey).Val() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the purchase never took the activity's lock")
		}
	}
	if err := p.stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	// A purchase cut off by the shutdown fails at the client (0); one
	// answered before run returned reaches it, however late it reads.
	select {
	case code := <-answered:
		if code != http.StatusCreated {
			t.Fatalf("in-flight purchase answered %d, want 201 before run returned", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the in-flight purchase was never answered")
	}
	if n := rdb.Exists(context.Background(), lockKey).Val(); n != 0 {
		t.Fatal("the activity's lock is still held after shutdown")
	}
}

// TestSmokeRealServers runs the service as deployed, on the real Redis and
// MariaDB with the verification stub, through the ops and buyer APIs, then
// repairs lost Redis stock with the reconcile command.
func TestSmokeRealServers(t *testing.T) {
	env := realEnv(t, time.Millisecond)
	prefix, rdb := env["SECKILL_KEY_PREFIX"], testenv.Redis(t)
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	admin := map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}

	if code, _ := call(t, "GET", base+"/readyz", nil, ""); code != http.StatusOK {
		t.Fatalf("GET /readyz: %d", code)
	}
	id := createAndPreload(t, base, admin, 3)
	for user := 1; user <= 4; user++ {
		code, v := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id), map[string]string{"X-User-ID": fmt.Sprint(user)}, "")
		want := http.StatusCreated
		if user == 4 {
			want = http.StatusConflict
		}
		if code != want {
			t.Fatalf("user %d buys: %d %v, want %d", user, code, v, want)
		}
	}
	code, audit := call(t, "GET", fmt.Sprintf("%s/admin/v1/activities/%d/audit", base, id), admin, "")
	if code != http.StatusOK || audit["orders"] != 3.0 || audit["redis_remaining"] != 0.0 || audit["consistent"] != true || audit["oversold"] != false {
		t.Fatalf("audit: %d %v", code, audit)
	}
	if code, body := getText(t, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, "seckill_") {
		t.Fatalf("GET /metrics: %d, no seckill_ metric in:\n%.2000s", code, body)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}

	// Redis loses the activity's keys; reconcile -force (the stock is
	// gone, not under another prefix) puts back total - orders.
	testenv.DeletePrefix(t, rdb, prefix)
	var out bytes.Buffer
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"seckill", "reconcile", "-activity", fmt.Sprint(id), "-force"}, func(k string) string { return env[k] }, &out, &stderr); err != nil {
		t.Fatalf("reconcile: %v\nstderr:\n%s", err, stderr.String())
	}
	var r reconcileOutput
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("reconcile output %q: %v", out.String(), err)
	}
	if r.Before != nil || r != (reconcileOutput{ActivityID: id, TotalStock: 3, Orders: 3, After: 0, Changed: true}) {
		t.Fatalf("reconcile = %s, want before null (nothing loaded), after 0", out.String())
	}
}
