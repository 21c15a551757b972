package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	_ "github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode) // as main does
	os.Exit(m.Run())
}

// process is one run() of the command in the background, as a test sees it.
type process struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan error
	stdout *syncBuffer
	stderr *testenv.LogWatch
}

// start runs the command with env as its whole environment.
func start(t *testing.T, env map[string]string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{t: t, cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: testenv.NewLogWatch()}
	getenv := func(k string) string { return env[k] }
	go func() {
		p.done <- run(ctx, append([]string{"seckill"}, args...), getenv, p.stdout, p.stderr)
		close(p.done)
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

// addr waits for the "listening" log line and returns its address.
func (p *process) addr() string {
	p.t.Helper()
	select {
	case a := <-p.stderr.Listening():
		return a
	case err := <-p.done:
		p.t.Fatalf("exited before listening: %v\nstderr:\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		p.t.Fatalf("not listening after 30s\nstderr:\n%s", p.stderr)
	}
	return ""
}

// stop cancels the run, as SIGTERM does, and returns what run returned.
func (p *process) stop() error {
	p.cancel()
	select {
	case err := <-p.done: // nil once closed: a second stop
		return err
	case <-time.After(30 * time.Second):
		p.t.Fatalf("still running 30s after cancel\nstderr:\n%s", p.stderr)
		return nil
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// call makes one HTTP request and decodes the JSON answer into a map. The
// answer must match docs/openapi.yaml.
func call(t *testing.T, method, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: checkedTransport(t, &http.Transport{DisableKeepAlives: true})}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &v) != nil {
		t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: checkedTransport(t, &http.Transport{DisableKeepAlives: true})}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

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

func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"user check not shorter than lock", map[string]string{"SECKILL_LOCK_TTL": "1s", "SECKILL_USERCHECK_TIMEOUT": "1s"}, "must be shorter than SECKILL_LOCK_TTL"},
		{"user check default vs short lock", map[string]string{"SECKILL_LOCK_TTL": "300ms"}, "must be shorter than SECKILL_LOCK_TTL"},
		{"bad lock TTL", map[string]string{"SECKILL_LOCK_TTL": "2"}, `SECKILL_LOCK_TTL="2": not a duration`},
		{"bad user-check timeout", map[string]string{"SECKILL_USERCHECK_TIMEOUT": "fast"}, "SECKILL_USERCHECK_TIMEOUT"},
		{"negative lock wait", map[string]string{"SECKILL_LOCK_WAIT": "-1s"}, "SECKILL_LOCK_WAIT"},
		{"zero lock wait", map[string]string{"SECKILL_LOCK_WAIT": "0s"}, "SECKILL_LOCK_WAIT"},
		{"queue of no one", map[string]string{"SECKILL_QUEUE_MAX": "0"}, "SECKILL_QUEUE_MAX"},
		{"queue size not a number", map[string]string{"SECKILL_QUEUE_MAX": "lots"}, "SECKILL_QUEUE_MAX"},
		{"no queued buyers at all", map[string]string{"SECKILL_QUEUE_MAX_TOTAL": "0"}, "SECKILL_QUEUE_MAX_TOTAL"},
		{"total queue not a number", map[string]string{"SECKILL_QUEUE_MAX_TOTAL": "many"}, "SECKILL_QUEUE_MAX_TOTAL"},
		{"bad rate", map[string]string{"SECKILL_RATE_PER_USER": "-3"}, "SECKILL_RATE_PER_USER"},
		{"pool of no connections", map[string]string{"SECKILL_MYSQL_MAX_CONNS": "0"}, "SECKILL_MYSQL_MAX_CONNS"},
		{"bad log format", map[string]string{"SECKILL_LOG_FORMAT": "xml"}, "SECKILL_LOG_FORMAT"},
		{"bad log level", map[string]string{"SECKILL_LOG_LEVEL": "loud"}, "SECKILL_LOG_LEVEL"},
		{"payment URL without secret", map[string]string{"SECKILL_PAYMENT_URL": "https://pay:8082"}, "SECKILL_PAYMENT_SECRET is required"},
		{"payment window below 1s", map[string]string{"SECKILL_PAYMENT_WINDOW": "999ms"}, "SECKILL_PAYMENT_WINDOW"},
		{"bad payment window", map[string]string{"SECKILL_PAYMENT_WINDOW": "soon"}, "SECKILL_PAYMENT_WINDOW"},
		{"unknown Redis mode", map[string]string{"SECKILL_REDIS_MODE": "ring", "SECKILL_REDIS_URL": "redis://127.0.0.1:6379"}, "SECKILL_REDIS_MODE"},
		{"cluster mode without a URL", map[string]string{"SECKILL_REDIS_MODE": "cluster"}, "SECKILL_REDIS_MODE=\"cluster\" needs SECKILL_REDIS_URL"},
		{"bad single URL", map[string]string{"SECKILL_REDIS_URL": "http://127.0.0.1:6379"}, "SECKILL_REDIS_URL"},
		{"unparsable URL", map[string]string{"SECKILL_REDIS_URL": "redis://user:s3cret@127.0.0.1:6379/%zz"}, "SECKILL_REDIS_URL"},
		{"bad cluster URL", map[string]string{"SECKILL_REDIS_MODE": "cluster", "SECKILL_REDIS_URL": "redis://127.0.0.1:7000?addr=127.0.0.1:7001&bogus=1"}, "SECKILL_REDIS_URL"},
		{"sentinel URL without master", map[string]string{"SECKILL_REDIS_MODE": "sentinel", "SECKILL_REDIS_URL": "redis://127.0.0.1:26379"}, "master_name"},
		{"brace in key prefix", map[string]string{"SECKILL_KEY_PREFIX": "shop{1}:"}, "SECKILL_KEY_PREFIX"},
		{"Redis without the database", map[string]string{"SECKILL_REDIS_URL": "redis://127.0.0.1:6379", "SECKILL_USERCHECK": "approve-all"}, "SECKILL_MYSQL_DSN is required"},
		{"the database without Redis", map[string]string{"SECKILL_MYSQL_DSN": "seckill:seckill@tcp(127.0.0.1:3306)/seckill", "SECKILL_USERCHECK": "approve-all"}, "SECKILL_REDIS_URL is required"},
		{"serve without stores", map[string]string{}, "serve needs SECKILL_REDIS_URL and SECKILL_MYSQL_DSN"},
		{"negative wait replicas", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "-1"}, "SECKILL_REDIS_WAIT_REPLICAS"},
		{"wait replicas not a number", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "all"}, "SECKILL_REDIS_WAIT_REPLICAS"},
		{"wait timeout eats the lease", map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "1", "SECKILL_REDIS_WAIT_TIMEOUT": "600ms"}, "SECKILL_REDIS_WAIT_TIMEOUT"},
		{"bad strict", map[string]string{"SECKILL_STRICT": "yes please"}, "SECKILL_STRICT"},
		{"bad user check mode", map[string]string{"SECKILL_USERCHECK": "everyone"}, "SECKILL_USERCHECK"},
		{"bad require timestamp", map[string]string{"SECKILL_PAYMENT_REQUIRE_TIMESTAMP": "sometimes"}, "SECKILL_PAYMENT_REQUIRE_TIMESTAMP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["SECKILL_HTTP_ADDR"] = "127.0.0.1:0"
			// Cancelled: should the configuration be accepted, run returns
			// at once instead of serving for ever.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stderr bytes.Buffer
			err := run(ctx, []string{"seckill", "serve"}, func(k string) string { return tc.env[k] }, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Fatal("served despite a refused configuration")
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(stderr.String(), "s3cret") {
				t.Fatalf("the Redis password leaked into the message: %v", err)
			}
		})
	}

	t.Run("every bad variable named at once", func(t *testing.T) {
		env := map[string]string{"SECKILL_LOCK_TTL": "x", "SECKILL_LOG_FORMAT": "xml"}
		_, err := loadConfig(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "SECKILL_LOCK_TTL") || !strings.Contains(err.Error(), "SECKILL_LOG_FORMAT") {
			t.Fatalf("loadConfig = %v", err)
		}
	})
	t.Run("Redis modes", func(t *testing.T) {
		for mode, url := range map[string]string{
			"single":   "redis://127.0.0.1:6379/0",
			"cluster":  "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002",
			"sentinel": "redis://127.0.0.1:26379?master_name=seckill&addr=127.0.0.1:26380",
		} {
			env := map[string]string{"SECKILL_REDIS_MODE": mode, "SECKILL_REDIS_URL": url, "SECKILL_STRICT": "false"}
			c, err := loadConfig(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			rdb := c.Redis.client()
			_ = rdb.Close()
			if c.RedisMode != mode || c.Redis.mode != mode {
				t.Errorf("%s: parsed as %q", mode, c.Redis.mode)
			}
			if o := c.Redis.cluster; o != nil && (o.ClusterStateReloadInterval != clusterReload || !o.ContextTimeoutEnabled || o.PoolSize != 64) {
				t.Errorf("cluster options lack the defaults: %+v", o)
			}
		}
	})
	t.Run("defaults", func(t *testing.T) {
		c, err := loadConfig(func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if c.HTTPAddr != ":8080" || c.LockTTL != 2*time.Second || c.UserCheckTimeout != 500*time.Millisecond ||
			c.LockWait != time.Second || c.QueueMax != 10_000 || c.QueueMaxTotal != 20_000 || c.ShutdownTimeout != 15*time.Second || !c.embedded() ||
			c.PaymentURL != "" || c.PaymentWindow != 15*time.Minute || c.RedisMode != "single" || c.WaitReplicas != 0 {
			t.Fatalf("defaults: %+v", c)
		}
	})
}

// The per-user rate limit is on unless turned off, with a burst
// that 100 concurrent purchases by one user stay under; 0 turns it off.
func TestPerUserRateLimitIsOnByDefault(t *testing.T) {
	c, err := loadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	api := apiConfig(c)
	if api.UserRate != 50 || api.UserBurst < 100 {
		t.Errorf("default per-user limit %v/s with a burst of %d, want 50/s and a burst of at least 100", api.UserRate, api.UserBurst)
	}
	env := map[string]string{"SECKILL_RATE_PER_USER": "0"}
	if c, err = loadConfig(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if api := apiConfig(c); api.UserRate != 0 {
		t.Errorf("SECKILL_RATE_PER_USER=0: per-user rate %v, want off", api.UserRate)
	}
}

func TestUserstub(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := start(t, nil, "userstub", "-addr", "127.0.0.1:0", "-reject-rate", "1")
	code, v := call(t, "GET", "http://"+p.addr()+"/v1/users/7/eligibility?activity_id=1", nil, "")
	if code != http.StatusOK || v["eligible"] != false {
		t.Fatalf("stub with -reject-rate 1: %d %v", code, v)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("userstub after cancel: %v", err)
	}

	err := run(context.Background(), []string{"seckill", "userstub", "-fail-rate", "2"}, func(string) string { return "" }, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("userstub -fail-rate 2 = %v, want a usage error", err)
	}
}

func TestPaystub(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := start(t, nil, "paystub", "-addr", "127.0.0.1:0")
	base := "http://" + p.addr()
	if code, _ := call(t, "GET", base+"/v1/payments/o-1", nil, ""); code != http.StatusNotFound {
		t.Fatalf("no payment yet: %d, want 404", code)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-1", nil, `{"status":"paid"}`); code != http.StatusAccepted {
		t.Fatalf("set payment: %d", code)
	}
	code, v := call(t, "GET", base+"/v1/payments/o-1", nil, "")
	if code != http.StatusOK || v["status"] != "paid" || v["order_id"] != "o-1" || v["paid_at"] == nil {
		t.Fatalf("paid payment: %d %v", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-1", nil, `{"status":"paid","callbacks":1}`); code != http.StatusBadRequest {
		t.Fatalf("callbacks without -callback-url: %d, want 400", code)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("paystub after cancel: %v", err)
	}

	// A merchant, an API key, and a wrong amount on demand.
	p = start(t, map[string]string{"SECKILL_PAYMENT_MERCHANT_ID": "m-1", "SECKILL_PAYMENT_API_KEY": "k-1"}, "paystub", "-addr", "127.0.0.1:0")
	base = "http://" + p.addr()
	key := map[string]string{"X-Api-Key": "k-1"}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","amount_minor":1999,"currency":"EUR"}`); code != http.StatusAccepted {
		t.Fatalf("set payment: %d", code)
	}
	if code, _ := call(t, "GET", base+"/v1/payments/o-2", nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("query without the API key: %d, want 401", code)
	}
	code, v = call(t, "GET", base+"/v1/payments/o-2", key, "")
	if code != http.StatusOK || v["amount_minor"] != 1999.0 || v["currency"] != "EUR" || v["merchant_id"] != "m-1" {
		t.Fatalf("paid payment: %d %v, want 1999 EUR to m-1", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","amount_minor":1999,"currency":"EUR","wrong":"amount"}`); code != http.StatusAccepted {
		t.Fatalf("set a wrong payment: %d", code)
	}
	if code, v = call(t, "GET", base+"/v1/payments/o-2", key, ""); code != http.StatusOK || v["amount_minor"] != 1998.0 {
		t.Fatalf("wrong amount: %d %v, want 1998", code, v)
	}
	if code, _ := call(t, "PUT", base+"/stub/payments/o-2", nil, `{"status":"paid","wrong":"price"}`); code != http.StatusBadRequest {
		t.Fatalf("wrong price: %d, want 400", code)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("paystub after cancel: %v", err)
	}
	err := run(context.Background(), []string{"seckill", "paystub", "-callback-url", "http://x"}, func(string) string { return "" }, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("paystub -callback-url without SECKILL_PAYMENT_SECRET = %v, want a usage error", err)
	}
}

func TestUnknownCommand(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"seckill", "sell"}, func(string) string { return "" }, io.Discard, &stderr)
	if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "usage: seckill") {
		t.Fatalf("run sell = %v, stderr %q", err, stderr.String())
	}
}

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
