package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The embedded demo: what serve starts with no store, and when it may.

func TestServeEmbeddedDemo(t *testing.T) {
	// Everything serve starts must stop when it returns, except the
	// statement-cache janitor gorm starts with PrepareStmt and never stops
	// (gorm/internal/lru: "done channel is never closed").
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("gorm.io/gorm/internal/lru.NewLRU[...].func1"))

	p := start(t, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0"})
	base := "http://" + p.addr()

	if code, _ := call(t, "GET", base+"/healthz", nil, ""); code != http.StatusOK {
		t.Fatalf("GET /healthz: %d, want 200", code)
	}
	code, act := call(t, "GET", base+"/api/v1/activities/1", nil, "")
	if code != http.StatusOK || act["name"] != "Moutai 53%" || act["remaining_stock"] != 100.0 || act["status"] != "active" {
		t.Fatalf("GET demo activity: %d %v", code, act)
	}
	code, ord := call(t, "POST", base+"/api/v1/activities/1/orders", map[string]string{"X-User-ID": "42"}, "")
	if code != http.StatusCreated || ord["user_id"] != 42.0 {
		t.Fatalf("buy the demo: %d %v", code, ord)
	}

	// The banner gives a working token, the three curl lines, two more
	// to pay the order through the in-process payment stub, and three for
	// the waiting room's activity.
	out := p.stdout.String()
	var token string
	for _, line := range strings.Split(out, "\n") {
		if after, ok := strings.CutPrefix(line, "Admin token (generated for this run): "); ok {
			token = after
		}
	}
	if len(token) != 32 || strings.Count(out, "curl -s") != 8 {
		t.Fatalf("banner has no token or not eight curl lines:\n%s", out)
	}
	payURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/stub/payments/ORDER_ID`).FindString(out)
	if payURL == "" {
		t.Fatalf("banner does not say how to pay:\n%s", out)
	}
	payURL = strings.Replace(payURL, "ORDER_ID", ord["order_id"].(string), 1)
	if code, _ := call(t, "PUT", payURL, nil, `{"status":"paid","callbacks":1}`); code != http.StatusAccepted {
		t.Fatalf("pay through the stub: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, mine := call(t, "GET", base+"/api/v1/activities/1/orders/mine", map[string]string{"X-User-ID": "42"}, "")
		if code == http.StatusOK && mine["status"] == "paid" && mine["paid_at"] != nil && mine["pay_by"] != nil {
			// Paid as the order asks: the in-process stub answers its price.
			if mine["price_minor"] != 149900.0 || mine["currency"] != "CNY" {
				t.Fatalf("the demo order's price: %v", mine)
			}
			break
		}
		if mine["status"] == "refund_required" {
			t.Fatalf("the demo order's payment did not match it: %v\nstderr:\n%s", mine, p.stderr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo order was not paid: %d %v", code, mine)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, audit := call(t, "GET", base+"/admin/v1/activities/1/audit", map[string]string{"Authorization": "Bearer " + token}, "")
	if code != http.StatusOK || audit["orders"] != 1.0 || audit["consistent"] != true {
		t.Fatalf("audit with the printed token: %d %v", code, audit)
	}
	if strings.Contains(p.stderr.String(), token) {
		t.Fatal("the admin token appears in the log")
	}
	if !strings.Contains(p.stderr.String(), "SECKILL_USERCHECK_URL is unset") {
		t.Errorf("no warning about the approve-everyone stub in the log:\n%s", p.stderr)
	}

	if err := p.stop(); err != nil {
		t.Fatalf("run after cancel: %v\nstderr:\n%s", err, p.stderr)
	}
}

// The demo approves every user and serves an unauthenticated payment stub:
// it starts only when asked for (no command and no store, or `demo`), never
// with a store configured, and on loopback only.
func TestDemoOnlyWhenAskedAndOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"demo with stores", []string{"demo"}, map[string]string{"SECKILL_REDIS_URL": "redis://127.0.0.1:6379", "SECKILL_MYSQL_DSN": "u:p@tcp(127.0.0.1:3306)/s"}, "demo runs on in-process stores only"},
		{"demo on every interface", []string{"demo"}, map[string]string{"SECKILL_HTTP_ADDR": ":0"}, "loopback address only"},
		{"default demo on a public address", nil, map[string]string{"SECKILL_HTTP_ADDR": "0.0.0.0:0"}, "loopback address only"},
		// The admin listener too.
		{"demo admin listener on every interface", []string{"demo"}, map[string]string{"SECKILL_ADMIN_ADDR": ":0"}, "SECKILL_ADMIN_ADDR"},
		{"demo admin listener on a public address", []string{"demo"}, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_ADMIN_ADDR": "0.0.0.0:9091"}, "SECKILL_ADMIN_ADDR"},
		{"demo admin listener not host:port", []string{"demo"}, map[string]string{"SECKILL_ADMIN_ADDR": "9091"}, "SECKILL_ADMIN_ADDR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stderr bytes.Buffer
			err := run(ctx, append([]string{"seckill"}, tc.args...), func(k string) string { return tc.env[k] }, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Fatal("served despite a refused mode")
			}
		})
	}
	t.Run("admin listener on loopback is fine", func(t *testing.T) {
		for _, addr := range []string{"127.0.0.1:9091", "[::1]:9091", "localhost:9091"} {
			cfg := config{HTTPAddr: ":8080", AdminAddr: addr}
			if err := checkMode(&cfg, true, false); err != nil {
				t.Errorf("SECKILL_ADMIN_ADDR=%s: %v", addr, err)
			}
		}
		// serve is not held to loopback.
		cfg := config{RedisURL: "redis://r:6379", MySQLDSN: "u:p@tcp(db)/s", AdminAddr: ":9091"}
		if err := checkMode(&cfg, false, true); err != nil {
			t.Errorf("serve with a public admin address: %v", err)
		}
	})
	t.Run("default address is loopback", func(t *testing.T) {
		cfg := config{HTTPAddr: ":8080"}
		if err := checkMode(&cfg, true, false); err != nil || cfg.HTTPAddr != demoAddr {
			t.Fatalf("checkMode = %v, address %q; want nil and %q", err, cfg.HTTPAddr, demoAddr)
		}
	})
}
