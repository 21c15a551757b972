package payment_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/payment"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

const secret = "test-payment-secret"

// world is one activity on the real Redis and MariaDB, a payment stub, and
// any number of service instances sharing them.
type world struct {
	t        *testing.T
	rdb      *redis.Client
	prefix   string
	dsn      string
	window   time.Duration
	orders   *order.Store
	stock    *stock.Store
	stub     *payment.Stub
	stubURL  string
	activity seckill.Activity
	fence    atomic.Int64 // activity lock grants of the simulated purchases
}

func newWorld(t *testing.T, window time.Duration, total int64) *world {
	t.Helper()
	w := &world{t: t, rdb: testenv.Redis(t), prefix: testenv.Prefix(t), dsn: testenv.MySQLDSN(t), window: window}
	w.orders = w.openOrders(w.dsn)
	w.stock = stock.New(w.rdb, keys.NewSpace(w.prefix))
	ctx := context.Background()
	start := time.Now().UTC().Add(-time.Minute)
	var err error
	w.activity, err = w.orders.Activities.CreateActivity(ctx, seckill.Activity{Name: "Moutai 53%", TotalStock: total, StartsAt: start, EndsAt: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.stock.Load(ctx, w.activity.ID, total, 1); err != nil {
		t.Fatal(err)
	}
	w.fence.Store(1)
	w.stub, err = payment.NewStub(payment.StubConfig{}, "", []byte(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.stub)
	t.Cleanup(func() {
		srv.Close()
		w.stub.Close()
	})
	w.stubURL = srv.URL
	return w
}

func (w *world) openOrders(dsn string) *order.Store {
	w.t.Helper()
	s, err := order.Open(context.Background(), dsn, order.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	s.Orders.SetPaymentWindow(w.window)
	w.t.Cleanup(func() { _ = s.Close() })
	return s
}

// buy sells one unit to user the way the purchase path does: a deduct in
// Redis and a fenced order write.
func (w *world) buy(user int64) seckill.Order {
	w.t.Helper()
	ctx := context.Background()
	fence := w.fence.Add(1)
	if _, _, _, err := w.stock.DeductEach(ctx, w.activity.ID, stock.Grant{Fence: fence}, []int64{user}, []int64{1}); err != nil {
		w.t.Fatalf("deduct for user %d: %v", user, err)
	}
	b, err := w.orders.Orders.CreateOrders(ctx, w.activity.ID, fence, []seckill.Order{{UserID: user}})
	if err != nil || len(b.Written) != 1 {
		w.t.Fatalf("order for user %d: %+v, %v", user, b, err)
	}
	return b.Written[0]
}

// buyBatch sells one unit to each user as one batch of the purchase path
// does: one deduct of them all in Redis and one fenced transaction.
func (w *world) buyBatch(users []int64) []seckill.Order {
	w.t.Helper()
	ctx := context.Background()
	fence := w.fence.Add(1)
	units := make([]int64, len(users))
	orders := make([]seckill.Order, len(users))
	for i, u := range users {
		units[i] = 1
		orders[i] = seckill.Order{UserID: u}
	}
	if _, taken, _, err := w.stock.DeductEach(ctx, w.activity.ID, stock.Grant{Fence: fence}, users, units); err != nil || taken != int64(len(users)) {
		w.t.Fatalf("deduct %d units: took %d, %v", len(users), taken, err)
	}
	b, err := w.orders.Orders.CreateOrders(ctx, w.activity.ID, fence, orders)
	if err != nil || len(b.Written) != len(users) {
		w.t.Fatalf("orders of %d users: %d written, %v", len(users), len(b.Written), err)
	}
	return b.Written
}

type instanceOptions struct {
	lockTTL   time.Duration
	mysqlAddr string // when set, the instance reaches MariaDB here (a fault proxy)
	// onReturned is Deps.OnUnitReturned.
	onReturned func(activityID int64)
	// merchantID and apiKey are Config.MerchantID and Config.APIKey.
	merchantID, apiKey string
	// requirePrice is Config.RequirePrice (SECKILL_STRICT).
	requirePrice bool
	// now is Config.Now (nil: time.Now).
	now func() time.Time
}

// instance is one service instance: its own Redis client, lock client,
// database pool and payment service, with its own metrics registry.
type instance struct {
	svc *payment.Service
	reg *prometheus.Registry
}

func (w *world) instance(opt instanceOptions) *instance {
	w.t.Helper()
	if opt.lockTTL == 0 {
		opt.lockTTL = time.Second
	}
	ropt, err := redis.ParseURL(testenv.RedisURL(w.t))
	if err != nil {
		w.t.Fatal(err)
	}
	ropt.ContextTimeoutEnabled = true
	rdb := redis.NewClient(ropt)
	locks := lock.New(rdb, nil)
	dsn := w.dsn
	if opt.mysqlAddr != "" {
		cfg := testenv.MySQLConfig(w.t, dsn)
		cfg.Addr = opt.mysqlAddr
		dsn = cfg.FormatDSN()
	}
	orders := w.openOrders(dsn)
	reg := prometheus.NewRegistry()
	svc, err := payment.New(payment.Config{
		ProviderURL:  w.stubURL,
		Secret:       []byte(secret),
		LockTTL:      opt.lockTTL,
		PollInterval: 100 * time.Millisecond,
		MerchantID:   opt.merchantID,
		RequirePrice: opt.requirePrice,
		APIKey:       opt.apiKey,
		Now:          opt.now,
	}, payment.Deps{Redis: rdb, Locks: locks, Stock: stock.New(rdb, keys.NewSpace(w.prefix)), Orders: orders, Registry: reg, OnUnitReturned: opt.onReturned})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = svc.Close()
		_ = locks.Close()
		_ = rdb.Close()
	})
	return &instance{svc: svc, reg: reg}
}

// counter sums the counter name over its series whose labels include want.
func (in *instance) counter(t testing.TB, name string, want map[string]string) float64 {
	return testenv.Metric(t, in.reg, name, want)
}

// books returns created, paid, expired, refund_required and the Redis stock.
func (w *world) books() (map[string]int64, int64) {
	w.t.Helper()
	ctx := context.Background()
	counts, err := w.orders.Orders.CountByStatus(ctx, w.activity.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	left, err := w.stock.Remaining(ctx, w.activity.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return counts, left
}

// checkBooks is the invariant after any payment fault: the books
// (seckill.Books: created + paid + Redis remaining == total, the
// activity's sold count is created + paid, no buyer twice), and
// CountOrders, which reconcile loads from, counts created + paid too.
func (w *world) checkBooks() {
	w.t.Helper()
	ctx := context.Background()
	// An expiry changes the order's status first and gives its unit back to
	// Redis right after: on a loaded machine a look between the two sees a
	// unit in neither. Give the returns in flight a few seconds; a unit
	// lost or returned twice never balances.
	var b seckill.Books
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, err := w.orders.Activities.Books(ctx, w.activity.ID)
		if err == nil {
			err = w.stock.FillBooks(ctx, got)
		}
		if err != nil || len(got) != 1 {
			w.t.Fatalf("books of activity %d: %v, %v", w.activity.ID, got, err)
		}
		b = got[0]
		if len(b.Violations()) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, v := range b.Violations() {
		w.t.Errorf("books: %s", v)
	}
	n, err := w.orders.Orders.CountOrders(ctx, w.activity.ID)
	if err != nil || n != b.Held {
		w.t.Errorf("CountOrders = %d, %v; want created + paid = %d", n, err, b.Held)
	}
}

func statusOf(t *testing.T, s *order.Store, id string) string {
	t.Helper()
	o, err := s.Orders.OrderByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o.Status
}

func describe(counts map[string]int64) string {
	var b strings.Builder
	for _, s := range []string{seckill.OrderStatusCreated, seckill.OrderStatusPaid, seckill.OrderStatusExpired, seckill.OrderStatusRefundRequired} {
		fmt.Fprintf(&b, "%s=%d ", s, counts[s])
	}
	return strings.TrimSpace(b.String())
}

// callbackAnswer is what an instance's Callback returned.
type callbackAnswer struct {
	o   seckill.Order
	err error
}

// callbackInBackground runs the instance's Callback of the order while the
// test goes on, and hands its answer over.
func (in *instance) callbackInBackground(ctx context.Context, orderID string) <-chan callbackAnswer {
	done := make(chan callbackAnswer, 1)
	go func() {
		v, err := in.svc.Callback(ctx, orderID)
		done <- callbackAnswer{v, err}
	}()
	return done
}
