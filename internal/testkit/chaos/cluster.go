package chaos

// The cluster under test: how a campaign builds it (Redis, the order store,
// the stubs, the proxies on every link, three instances), creates its
// activities, reads it past its faults, and tears it down.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// cluster is the system under test.
type cluster struct {
	cfg         Config
	redis       *redisTopology
	redisVictim *redistopo.Node
	galera      *Galera
	db          *database
	rows        *rowHolder // the hold-row faults' outside transaction
	links       map[string][]*toxic.Proxy
	late        *faultproxy.Proxy // between the database link's toxics and the database: holds COMMITs
	hold        commitHold        // which COMMITs late holds
	instances   []*instance
	userStub    *usercheck.Stub
	payStub     *payment.Stub
	servers     []*http.Server
	prefix      string  // of the instances' Redis keys
	prices      *sql.DB // the payment stub's reads of the orders' quantities
}

func (c *cluster) storeName() string {
	if c.galera != nil {
		return "galera"
	}
	return "mariadb"
}

// serve serves h on a free loopback port.
func (c *cluster) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("chaos: listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	c.servers = append(c.servers, srv)
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), nil
}

// proxy puts a Toxiproxy proxy on a link to target.
func (c *cluster) proxy(link, target string) (string, error) {
	p, err := toxic.New(target)
	if err != nil {
		return "", err
	}
	c.links[link] = append(c.links[link], p)
	return p.Addr(), nil
}

func (c *cluster) build() (err error) {
	cfg := c.cfg
	if c.redis, err = startRedis(cfg.Redis, cfg.RedisServer, cfg.Dir); err != nil {
		return fmt.Errorf("chaos: Redis %s: %w", cfg.Redis, err)
	}
	c.links[LinkRedis] = c.redis.proxies()

	admin, causal := cfg.MySQLDSN, false
	if c.galera != nil {
		admin, causal = c.galera.DSN, true
	}
	if admin == "" {
		return errors.New("chaos: no order store: neither Galera nor a MariaDB DSN")
	}
	if c.db, err = createDatabase(admin, causal); err != nil {
		return err
	}
	if c.rows, err = newRowHolder(c.db.dsn); err != nil {
		return err
	}
	if c.late, err = faultproxy.New(c.db.addr()); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c.late.SetRequestMatch(c.hold.newMatch)
	dbAddr, err := c.proxy(LinkDB, c.late.Addr())
	if err != nil {
		return err
	}

	if c.userStub, err = usercheck.NewStub(usercheck.StubConfig{Latency: 2 * time.Millisecond, RejectRate: 0.05, Seed: uint64(cfg.Seed) + 1}); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	userAddr, err := c.serve(c.userStub)
	if err != nil {
		return err
	}
	if userAddr, err = c.proxy(LinkUserCheck, userAddr); err != nil {
		return err
	}
	payAddr, err := c.servePayments()
	if err != nil {
		return err
	}

	prefix := "chaos:" + randomHex(4) + ":"
	vars := map[string]string{
		"SECKILL_REDIS_MODE":          cfg.Redis,
		"SECKILL_REDIS_URL":           c.redis.URL(),
		"SECKILL_MYSQL_DSN":           c.db.at(dbAddr),
		"SECKILL_USERCHECK_URL":       "http://" + userAddr,
		"SECKILL_PAYMENT_URL":         "http://" + payAddr,
		"SECKILL_PAYMENT_SECRET":      string(cfg.paymentSecret),
		"SECKILL_PAYMENT_MERCHANT_ID": chaosMerchant,
		"SECKILL_PAYMENT_WINDOW":      cfg.PaymentWindow.String(),
		"SECKILL_ADMIN_TOKEN":         cfg.adminToken,
		"SECKILL_KEY_PREFIX":          prefix,
		"SECKILL_LOCK_TTL":            lockTTL.String(),
		"SECKILL_USERCHECK_TIMEOUT":   "500ms",
		"SECKILL_LOCK_WAIT":           lockWait.String(),
		"SECKILL_SHUTDOWN_TIMEOUT":    "3s",
		"SECKILL_LOG_LEVEL":           "warn",
		"SECKILL_ADMISSION_TTL":       admissionTTL.String(),
		// An event the sink acknowledged is one a replica holds: a
		// failover loses none (docs/DEPLOY.md), and the events check
		// (checkevents.go) may count every one.
		"SECKILL_REDIS_WAIT_REPLICAS": "1",
	}
	env := environ(vars)
	for i := range 3 {
		port, err := redistopo.FreePort()
		if err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(cfg.Dir, fmt.Sprintf("instance-%d.log", i)))
		if err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
		in := &instance{index: i, bin: cfg.Binary, log: logf, url: fmt.Sprintf("http://127.0.0.1:%d", port),
			env: append(append([]string{}, env...), fmt.Sprintf("SECKILL_HTTP_ADDR=127.0.0.1:%d", port))}
		c.instances = append(c.instances, in)
	}
	// Started as a supervisor would: again while the stores do not answer
	// yet (the three apply the migrations at once, maybe during a Galera
	// failover of another test). Beside a CI run on two cores that took
	// longer than 2 minutes once ("instance 0: not ready").
	for _, in := range c.instances {
		if err := in.restart(5 * time.Minute); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
	}
	c.prefix = prefix
	return nil
}

// activities are a campaign's activities.
type activities struct {
	// sold are the cfg.Activities activities of cfg.Stock units that the
	// clients buy, the last of them with per_user_limit cfg.Quantity.
	sold []int64
	// open are the activities no sale empties (campaign.go).
	open []int64
	// room is the activity with a waiting room (room.go).
	room int64
}

// all is every activity of the campaign.
func (a activities) all() []int64 {
	return append(append(append([]int64{}, a.sold...), a.open...), a.room)
}

// environ is this process's environment without its SECKILL_ and OTEL_
// variables, with vars.
func environ(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SECKILL_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// createActivities creates the campaign's activities, on sale from now on.
func (c *cluster) createActivities(ctx context.Context) (acts activities, err error) {
	client := &http.Client{Timeout: 10 * time.Second}
	now := time.Now().UTC()
	for i := range c.cfg.Activities {
		extra := ""
		if i == c.cfg.Activities-1 && c.cfg.Quantity > 1 {
			extra = fmt.Sprintf(`,"per_user_limit":%d`, c.cfg.Quantity)
		}
		id, err := c.createActivity(ctx, client, fmt.Sprintf("chaos %d", i), c.cfg.Stock, extra)
		if err != nil {
			return acts, err
		}
		acts.sold = append(acts.sold, id)
	}
	for i := range openActivities {
		id, err := c.createActivity(ctx, client, fmt.Sprintf("chaos open %d", i), openStock, "")
		if err != nil {
			return acts, err
		}
		acts.open = append(acts.open, id)
	}
	// The room opened before the start, which has passed: joins are
	// placed in arrival order.
	room := fmt.Sprintf(`,"waiting_room":{"opens_at":%q}`, now.Add(-2*time.Minute).Format(time.RFC3339))
	acts.room, err = c.createActivity(ctx, client, "chaos room", roomStock, room)
	return acts, err
}

// createActivity creates an activity of stock units on sale from a minute
// ago for a day; extra is more of its body (",\"field\":value..."). The
// order store may still be recovering from the previous campaign's faults
// (a Galera node rejoining on a loaded machine): a 503 or a failed request
// is tried again for up to setupPatience before the campaign gives up.
func (c *cluster) createActivity(ctx context.Context, client *http.Client, name string, stock int64, extra string) (int64, error) {
	deadline := time.Now().Add(setupPatience)
	for {
		id, retryable, err := c.createActivityOnce(ctx, client, name, stock, extra)
		if err == nil || !retryable || time.Now().After(deadline) {
			return id, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// setupPatience bounds createActivity's tries.
const setupPatience = 30 * time.Second

func (c *cluster) createActivityOnce(ctx context.Context, client *http.Client, name string, stock int64, extra string) (id int64, retryable bool, err error) {
	now := time.Now().UTC()
	// Priced, as payments on under the secure defaults require; the stub
	// answers that price (cluster.price).
	body := fmt.Sprintf(`{"name":%q,"total_stock":%d,"price_minor":%d,"currency":%q,"starts_at":%q,"ends_at":%q%s}`, name, stock, chaosPriceMinor, chaosCurrency,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(24*time.Hour).Format(time.RFC3339), extra)
	req, _ := http.NewRequestWithContext(ctx, "POST", c.instances[0].url+"/admin/v1/activities", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.cfg.adminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0, true, fmt.Errorf("chaos: create activity: %w", err)
	}
	var a struct {
		ID int64 `json:"id"`
	}
	raw, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode == http.StatusServiceUnavailable {
		return 0, true, fmt.Errorf("chaos: create activity %s: %d %s", name, res.StatusCode, raw)
	}
	if err == nil {
		err = json.Unmarshal(raw, &a)
	}
	if err != nil {
		return 0, false, fmt.Errorf("chaos: create activity: %d: %w", res.StatusCode, err)
	}
	if res.StatusCode != http.StatusCreated {
		return 0, false, fmt.Errorf("chaos: create activity %s: %d %s", name, res.StatusCode, raw)
	}
	return a.ID, false, nil
}

// checkerDB opens the checker's own connection to the order store, past
// the service's link and its faults. On Galera every read waits for what the
// cluster committed (wsrep_sync_wait, set on each connection the pool opens).
func (c *cluster) checkerDB() (*sql.DB, error) {
	dsn, err := mysql.ParseDSN(c.db.dsn)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	dsn.ParseTime = true // created_at
	if c.db.causal {
		if dsn.Params == nil {
			dsn.Params = map[string]string{}
		}
		dsn.Params["wsrep_sync_wait"] = "1"
	}
	db, err := sql.Open("mysql", dsn.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	db.SetMaxOpenConns(2) // the fence watch's reads beside the final state's snapshot
	return db, nil
}

func (c *cluster) close() {
	for _, in := range c.instances {
		in.stop()
		_ = in.log.Close()
	}
	for _, srv := range c.servers {
		_ = srv.Close()
	}
	if c.payStub != nil {
		c.payStub.Close()
	}
	if c.prices != nil {
		_ = c.prices.Close()
	}
	for _, ps := range c.links {
		for _, p := range ps {
			_ = p.Close()
		}
	}
	if c.late != nil {
		_ = c.late.Close()
	}
	if c.redis != nil {
		c.redis.close()
	}
	if c.rows != nil {
		c.rows.close()
	}
	if c.db != nil {
		c.db.drop()
	}
}

// Every activity of a campaign sells at one price to one merchant: the
// stub's paid answers name them, as the secure defaults check.
const (
	chaosMerchant   = "m-chaos"
	chaosPriceMinor = 100
	chaosCurrency   = "CNY"
)

// price is the payment stub's amount of an order: the price of each of
// its units (chaosPriceMinor) times its quantity, read from the campaign's
// database past the service's link and its faults (docs/API.md "Quantity
// per buyer": a payment proves amount_minor).
func (c *cluster) price(ctx context.Context, orderID string) (int64, string, bool, error) {
	var quantity int64
	err := c.prices.QueryRowContext(ctx, "SELECT quantity FROM orders WHERE id = ?", orderID).Scan(&quantity)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, "", false, nil
	case err != nil:
		return 0, "", false, fmt.Errorf("chaos: the price of order %s: %w", orderID, err)
	}
	return quantity * chaosPriceMinor, chaosCurrency, true, nil
}

// servePayments starts the payment stub, naming the campaign's merchant and
// price, behind a fault proxy; it returns the proxy's address.
func (c *cluster) servePayments() (string, error) {
	var err error
	if c.payStub, err = payment.NewStub(payment.StubConfig{}, "", c.cfg.paymentSecret, nil); err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	c.payStub.SetMerchantID(chaosMerchant)
	if c.prices, err = sql.Open("mysql", c.db.dsn); err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	c.payStub.SetPriceLookup(c.price)
	addr, err := c.serve(c.payStub)
	if err != nil {
		return "", err
	}
	return c.proxy(LinkPayment, addr)
}
