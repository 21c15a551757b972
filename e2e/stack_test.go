// Package e2e_test drives the whole service (httpapi over purchase over the
// real lock, stock, order and usercheck packages) against the real Redis and
// MariaDB, through HTTP, the way the mobile app and the ops tools do.
package e2e_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-retry"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/httpapi"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

const adminToken = "e2e-admin-token-0123456789"

type stackOptions struct {
	lockTTL          time.Duration
	userCheckTimeout time.Duration
	lockWait         time.Duration
	stub             usercheck.StubConfig
	breaker          usercheck.BreakerConfig
	// redisAddr, when set, is where the service's Redis client connects
	// (a fault proxy in front of the real Redis).
	redisAddr func(real string) string
	// redisTimeout is the service's Redis read/write timeout.
	redisTimeout time.Duration
}

// stack is one service instance with its own key prefix and database.
type stack struct {
	t       testing.TB
	opt     stackOptions
	rdb     redis.UniversalClient // direct, for inspecting Redis
	prefix  string
	dsn     string
	db      *sql.DB      // direct, for inspecting MariaDB
	booksDB *order.Store // direct, for reading the books (bookStore)
	stub    *usercheck.Stub
	stubURL string
	client  *http.Client
	// topology: SECKILL_REDIS_MODE and _URL of the processes, when they
	// run on a Redis Cluster or Sentinel (scaleout_test.go).
	topology map[string]string
	// priced: the stack's activities get a price (payments on under the
	// secure defaults: pricedPayments).
	priced bool

	// One service instance.
	svc   wiring.Service
	users *usercheck.Client
	locks *lock.Client
	url   string
}

func newStack(t testing.TB, opt stackOptions) *stack {
	t.Helper()
	if opt.lockTTL == 0 {
		opt.lockTTL = 2 * time.Second
	}
	if opt.userCheckTimeout == 0 {
		opt.userCheckTimeout = opt.lockTTL / 4
	}
	if opt.redisTimeout == 0 {
		opt.redisTimeout = 500 * time.Millisecond
	}
	s := &stack{t: t, opt: opt, rdb: testenv.Redis(t), prefix: testenv.Prefix(t), dsn: testenv.MySQLDSN(t)}
	var err error
	s.db, err = sql.Open("mysql", s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.db.Close() })
	s.stub, err = usercheck.NewStub(opt.stub)
	if err != nil {
		t.Fatal(err)
	}
	s.stubURL = newHTTPServer(t, s.stub)
	s.client = &http.Client{
		Timeout:   30 * time.Second,
		Transport: checkedTransport(t, &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 512}),
	}
	t.Cleanup(s.client.CloseIdleConnections)
	s.start()
	return s
}

// sibling returns another service instance on the same Redis keys, database
// and user stub: a second process of the same deployment.
func (s *stack) sibling() *stack {
	c := *s
	c.start()
	return &c
}

// start builds one service instance over the stack's shared parts.
func (s *stack) start() {
	t, opt := s.t, s.opt
	orders, err := order.Open(context.Background(), s.dsn, order.Options{})
	if err != nil {
		t.Fatalf("open orders: %v", err)
	}
	t.Cleanup(func() { _ = orders.Close() })

	ropt, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if opt.redisAddr != nil {
		ropt.Addr = opt.redisAddr(ropt.Addr)
	}
	ropt.ContextTimeoutEnabled = true
	ropt.ReadTimeout, ropt.WriteTimeout = opt.redisTimeout, opt.redisTimeout
	ropt.PoolSize = 64
	ropt.MaxRetries = -1 // a retried write could land twice; the service decides
	svcRedis := redis.NewClient(ropt)
	t.Cleanup(func() { _ = svcRedis.Close() })

	s.users = usercheck.New(usercheck.Config{BaseURL: s.stubURL, Timeout: opt.userCheckTimeout, Breaker: opt.breaker})
	s.locks = lock.New(svcRedis, nil)
	t.Cleanup(func() { _ = s.locks.Close() })
	s.svc, err = wiring.New(app.Config{Keys: keys.NewSpace(s.prefix), Lease: lock.Policy{TTL: opt.lockTTL, CallTimeout: opt.userCheckTimeout, Wait: opt.lockWait}}, app.Deps{Redis: svcRedis, Locks: s.locks, Orders: orders, Users: s.users, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.svc.Close() })
	s.url = newHTTPServer(t, httpapi.NewServer(httpapi.Config{AdminToken: adminToken}, httpapi.Deps{Service: s.svc, Tasks: s.svc, Pricer: s.svc, Rooms: s.svc, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}))
}

// newHTTPServer serves h on loopback until the test ends and returns its URL.
func newHTTPServer(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// newStubServer starts a user-verification stub and returns its URL.
func newStubServer(t testing.TB, cfg usercheck.StubConfig) string {
	stub, err := usercheck.NewStub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, stub)
}

// response is one HTTP answer, decoded.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r response) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (s *stack) do(method, path string, body any, header map[string]string) response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return doRaw(s.t, s.client, req)
}

// doRaw sends req and decodes the answer, which must be a JSON object.
func doRaw(t testing.TB, client *http.Client, req *http.Request) response {
	res, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", req.Method, req.URL.Path, err)
		return response{}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Errorf("%s %s: %d body is not a JSON object: %q", req.Method, req.URL.Path, res.StatusCode, raw)
		}
	}
	return r
}

func admin() map[string]string { return map[string]string{"Authorization": "Bearer " + adminToken} }

func buyer(user int64) map[string]string {
	return map[string]string{"X-User-ID": strconv.FormatInt(user, 10)}
}

// createActivity creates an activity that is on sale now and preloads it.
func (s *stack) createActivity(total int64) int64 {
	s.t.Helper()
	now := time.Now().UTC()
	return s.createActivityWindow(total, now.Add(-time.Minute), now.Add(time.Hour))
}

func (s *stack) createActivityWindow(total int64, starts, ends time.Time) int64 {
	s.t.Helper()
	r := s.do("POST", "/admin/v1/activities", s.withPrice(map[string]any{
		"name": "Moutai 53%", "total_stock": total,
		"starts_at": starts.Format(time.RFC3339), "ends_at": ends.Format(time.RFC3339),
	}), admin())
	if r.status != http.StatusCreated {
		s.t.Fatalf("create activity: %d %s", r.status, r.raw)
	}
	id := int64(r.body["id"].(float64))
	if p := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/preload", id), nil, admin()); p.status != http.StatusOK {
		s.t.Fatalf("preload: %d %s", p.status, p.raw)
	}
	return id
}

func (s *stack) buy(activity, user int64, header map[string]string) response {
	h := buyer(user)
	for k, v := range header {
		h[k] = v
	}
	return s.do("POST", fmt.Sprintf("/api/v1/activities/%d/orders", activity), nil, h)
}

type audit struct {
	ActivityID     int64 `json:"activity_id"`
	TotalStock     int64 `json:"total_stock"`
	Orders         int64 `json:"orders"`
	Units          int64 `json:"units"`
	RedisRemaining int64 `json:"redis_remaining"`
	Oversold       bool  `json:"oversold"`
	Consistent     bool  `json:"consistent"`
}

func (s *stack) audit(activity int64) audit {
	s.t.Helper()
	r := s.do("GET", fmt.Sprintf("/admin/v1/activities/%d/audit", activity), nil, admin())
	if r.status != http.StatusOK {
		s.t.Fatalf("audit: %d %s", r.status, r.raw)
	}
	var a audit
	if err := json.Unmarshal(r.raw, &a); err != nil {
		s.t.Fatal(err)
	}
	return a
}

// saleResult is what buyers saw during a sale.
type saleResult struct {
	mu       sync.Mutex
	created  map[string]int64 // order id -> user
	statuses map[string]int   // "201" or the error code -> count
}

func (r *saleResult) add(res response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := strconv.Itoa(res.status)
	if res.status == http.StatusCreated {
		id, _ := res.body["order_id"].(string)
		u, _ := res.body["user_id"].(float64)
		r.created[id] = int64(u)
	} else {
		key = res.code()
	}
	r.statuses[key]++
}

// buyFunc makes one purchase attempt.
type buyFunc func(activity, user int64) response

// runSale has users firstUser.. buy one unit each, with at most parallel
// buyers at once. A buyer retries busy and unavailable answers like the app
// does, with backoff, until it gets a final answer; the sale as a whole
// stops retrying after saleDeadline, so a slow machine gets a slower sale,
// not a different outcome.
func runSale(t testing.TB, buy buyFunc, activity int64, buyers, parallel int, firstUser int64) *saleResult {
	t.Helper()
	return runSaleBackoff(t, buy, activity, buyers, parallel, firstUser, 8*time.Millisecond)
}

// runSaleBackoff is runSale with buyers whose first retry waits about
// backoff, doubling up to 16 times that.
func runSaleBackoff(t testing.TB, buy buyFunc, activity int64, buyers, parallel int, firstUser int64, backoff time.Duration) *saleResult {
	t.Helper()
	res := &saleResult{created: map[string]int64{}, statuses: map[string]int{}}
	deadline := time.Now().Add(saleDeadline)
	users := make(chan int64)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for u := range users {
				for a := 0; ; a++ {
					r := buy(activity, u)
					res.add(r)
					if r.status != http.StatusTooManyRequests && r.status != http.StatusServiceUnavailable || !time.Now().Before(deadline) {
						break
					}
					// Back off like an app does, jittered.
					step := backoff << min(a, 4)
					time.Sleep(step/2 + rand.N(step/2))
				}
			}
		})
	}
	for u := firstUser; u < firstUser+int64(buyers); u++ {
		users <- u
	}
	close(users)
	wg.Wait()
	return res
}

// saleDeadline bounds how long buyers of one sale keep retrying.
const saleDeadline = 4 * time.Minute

// ordersInDB returns the activity's order rows as user -> count.
func (s *stack) ordersInDB(activity int64) map[int64]int {
	s.t.Helper()
	rows, err := s.db.Query("SELECT user_id FROM orders WHERE activity_id = ?", activity)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	got := map[int64]int{}
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			s.t.Fatal(err)
		}
		got[u]++
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	return got
}

// books reads the activity's books straight from MariaDB and Redis, as
// `seckill books` does (order.Activities.Books, stock.Store.FillBooks). A read
// that fails is tried again for up to readAgainWithin: after a failover a
// pooled connection to the dead node answers "invalid connection" once,
// and a loaded box takes a while to let a new one in. Only reads are tried
// again.
func (s *stack) books(activity int64) seckill.Books {
	s.t.Helper()
	var got []seckill.Books
	err := retry.Do(context.Background(), retry.WithMaxDuration(readAgainWithin, retry.NewConstant(250*time.Millisecond)),
		func(ctx context.Context) error {
			db, err := s.bookStore(ctx)
			if err == nil {
				got, err = db.Activities.Books(ctx, activity)
			}
			if err == nil {
				err = stock.New(s.rdb, keys.NewSpace(s.prefix)).FillBooks(ctx, got)
			}
			return retry.RetryableError(err)
		})
	if err != nil || len(got) != 1 {
		s.t.Fatalf("books of activity %d: %+v, %v", activity, got, err)
	}
	return got[0]
}

// readAgainWithin bounds how long a check's read of the books is tried
// again.
const readAgainWithin = 30 * time.Second

// bookStore is the order store the books are read with, opened on first
// use that succeeds.
func (s *stack) bookStore(ctx context.Context) (*order.Store, error) {
	if s.booksDB == nil {
		db, err := order.Open(ctx, s.dsn, order.Options{SkipMigrations: true})
		if err != nil {
			return nil, fmt.Errorf("open the books: %w", err)
		}
		s.t.Cleanup(func() { _ = db.Close() })
		s.booksDB = db
	}
	return s.booksDB, nil
}

// checkBooks asserts the invariants: those of checkBooksDirect, and the
// audit agreeing.
func (s *stack) checkBooks(activity, total int64, res *saleResult) audit {
	s.t.Helper()
	var created map[string]int64
	if res != nil {
		created = res.created
	}
	held, _ := s.checkBooksDirect(activity, total, created)
	a := s.audit(activity)
	if a.Oversold || !a.Consistent || a.Orders != held {
		s.t.Errorf("audit %+v, %d orders hold a unit", a, held)
	}
	return a
}
