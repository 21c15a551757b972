package purchase_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/books"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// These are fast unit tests on the embedded stores (miniredis, SQLite).
// The safety claims are proven against real Redis and MariaDB in e2e/.

// clock is a settable clock for the service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	svc    wiring.Service
	rdb    *redis.Client
	clock  *clock
	orders *order.Store
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:", order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	return newFixtureOn(t, orders)
}

// newFixtureOn is newFixture on the given order store.
func newFixtureOn(t *testing.T, orders *order.Store) fixture {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	c := &clock{now: time.Now()}
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Purchase: purchase.Config{Now: c.Now}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return fixture{svc: svc, rdb: rdb, clock: c, orders: orders}
}

func (f fixture) activity(t *testing.T, total int64) int64 {
	t.Helper()
	now := f.clock.Now()
	a, err := f.svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai 53%", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func code(err error) string {
	var e *seckill.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestNewRefusesAVerificationTimeoutNotShorterThanTheLease(t *testing.T) {
	for _, c := range []struct{ ttl, timeout time.Duration }{{time.Second, time.Second}, {time.Second, 2 * time.Second}, {time.Second, 0}, {0, time.Second}} {
		_, err := purchase.New(purchase.Config{Lease: lock.Policy{TTL: c.ttl, CallTimeout: c.timeout}}, purchase.Deps{})
		if err == nil {
			t.Errorf("New accepted lock TTL %v with verification timeout %v", c.ttl, c.timeout)
		}
	}
}

func TestCreateActivityValidates(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	for name, a := range map[string]seckill.Activity{
		"empty name":     {Name: "", TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"long name":      {Name: string(make([]rune, 129)), TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"no stock":       {Name: "x", TotalStock: 0, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"too much stock": {Name: "x", TotalStock: seckill.MaxTotalStock + 1, StartsAt: now, EndsAt: now.Add(time.Hour)},
		"ends at start":  {Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now},
		"ends before it": {Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now.Add(-time.Hour)},
	} {
		if _, err := f.svc.CreateActivity(context.Background(), a); code(err) != seckill.EInvalid {
			t.Errorf("%s: %v, want invalid_request", name, err)
		}
	}
}

func TestBuyThenAlreadyPurchasedThenSoldOut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 1)
	o, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 1})
	if err != nil || o.ActivityID != act || o.UserID != 1 || o.Status != seckill.OrderStatusCreated || o.ID == "" {
		t.Fatalf("Buy = %+v, %v", o, err)
	}
	_, err = f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 1})
	var e *seckill.Error
	if !errors.As(err, &e) || e.Code != seckill.EAlreadyPurchased || e.OrderID != o.ID {
		t.Errorf("second Buy: %v, want already_purchased with order %s", err, o.ID)
	}
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Errorf("Buy of the second unit: %v, want sold_out", err)
	}
	a, err := f.svc.Audit(ctx, act)
	if err != nil || !a.Consistent || a.Oversold || a.Orders != 1 {
		t.Errorf("seckill.Audit = %+v, %v", a, err)
	}
}

func TestWindow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 5)
	f.clock.Add(-2 * time.Minute)
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 1}); code(err) != seckill.ENotStarted {
		t.Errorf("before the window: %v", err)
	}
	f.clock.Add(2*time.Minute + time.Hour)
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 1}); code(err) != seckill.EEnded {
		t.Errorf("after the window: %v", err)
	}
}

// The in-process sold-out mark answers without Redis, but only for a second:
// a unit put back by another process is sold through this one soon after.
func TestSoldOutMarkIsRecheckedAfterASecond(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	act := f.activity(t, 2)
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 1}); err != nil {
		t.Fatal(err)
	}
	// Another process deducts the last unit, and this one sees the activity
	// sold out and marks it.
	if err := f.rdb.HSet(ctx, keys.Space{}.Stock(act), "remaining", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Fatalf("with no unit left: %v, want sold_out", err)
	}
	// The other process could not write its order and puts the unit back.
	if err := f.rdb.HSet(ctx, keys.Space{}.Stock(act), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 2}); code(err) != seckill.ESoldOut {
		t.Fatalf("within the mark's second: %v, want sold_out from the mark", err)
	}
	f.clock.Add(time.Second)
	if _, err := f.svc.Buy(ctx, seckill.BuyRequest{ActivityID: act, UserID: 2}); err != nil {
		t.Errorf("after the mark's second: %v, want the returned unit sold", err)
	}
}

// heldService is a service whose verification of user 1 is held until
// release is closed, so a test can fill the activity's queue behind it.
type heldService struct {
	svc     wiring.Service
	mr      *miniredis.Miniredis
	orders  *order.Store
	act     int64
	entered chan struct{}
	release chan struct{}
}

func newHeldService(t *testing.T, wait time.Duration, cfg purchase.Config) *heldService {
	t.Helper()
	h := &heldService{mr: miniredis.RunT(t), entered: make(chan struct{}, 1), release: make(chan struct{})}
	rdb := redis.NewClient(&redis.Options{Addr: h.mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	var err error
	h.orders, err = order.Open(context.Background(), order.SQLitePrefix+":memory:", order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.orders.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	users := verifierFunc(func(ctx context.Context, userID, _ int64) error {
		if userID == 1 {
			h.entered <- struct{}{}
			<-h.release
		}
		return nil
	})
	h.svc, err = wiring.New(app.Config{Lease: lock.Policy{TTL: 5 * time.Second, CallTimeout: time.Second, Wait: wait}, Purchase: cfg},
		app.Deps{Redis: rdb, Locks: locks, Orders: h.orders, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.svc.Close() })
	now := time.Now()
	a, err := h.svc.CreateActivity(context.Background(), seckill.Activity{Name: "x", TotalStock: 100, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	h.act = a.ID
	return h
}

type bought struct {
	user  int64
	order seckill.Order
	err   error
}

// buy starts user's purchase and returns where its answer will arrive.
func (h *heldService) buy(user int64) <-chan bought {
	c := make(chan bought, 1)
	go func() {
		o, err := h.svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: h.act, UserID: user})
		c <- bought{user, o, err}
	}()
	return c
}

// waitQueued waits until n buyers wait in the activity's queue.
func (h *heldService) waitQueued(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for h.svc.Queued(h.act) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d buyers queued, want %d", h.svc.Queued(h.act), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// While a batch holds the activity, buyers queue instead of bouncing on a
// busy lock, cost no Redis command while they wait, and the next lock grant
// serves all of them at once.
func TestBuyersQueueForTheNextBatch(t *testing.T) {
	h := newHeldService(t, time.Minute, purchase.Config{})
	first := h.buy(1)
	<-h.entered
	before := h.mr.CommandCount()
	var answers []<-chan bought
	for u := int64(2); u <= 21; u++ {
		answers = append(answers, h.buy(u))
	}
	h.waitQueued(t, 20)
	if n := h.mr.CommandCount() - before; n != 0 {
		t.Errorf("20 queued buyers cost %d Redis commands, want 0", n)
	}
	close(h.release)
	if b := <-first; b.err != nil {
		t.Fatalf("first buyer: %v", b.err)
	}
	fences := map[int64]int{}
	for _, c := range answers {
		b := <-c
		if b.err != nil {
			t.Errorf("user %d: %v, want an order", b.user, b.err)
			continue
		}
		fences[b.order.Fence]++
	}
	if len(fences) != 1 {
		t.Errorf("the 20 queued buyers' orders were written under fences %v, want one grant for all", fences)
	}
}

// A full queue answers busy at once; so does a queue wait that runs out,
// and a buyer who left the queue is never sold to.
func TestBusyOnlyWhenTheQueueIsFullOrTheWaitIsOver(t *testing.T) {
	h := newHeldService(t, 300*time.Millisecond, purchase.Config{QueueMax: 2})
	first := h.buy(1)
	<-h.entered
	waiting := []<-chan bought{h.buy(2), h.buy(3)}
	h.waitQueued(t, 2)
	if b := <-h.buy(4); code(b.err) != seckill.EBusy {
		t.Errorf("buyer beyond a full queue: %v, want busy", b.err)
	}
	for _, c := range waiting {
		if b := <-c; code(b.err) != seckill.EBusy {
			t.Errorf("user %d, after the queue wait: %v, want busy", b.user, b.err)
		}
	}
	close(h.release)
	if b := <-first; b.err != nil {
		t.Fatalf("first buyer: %v", b.err)
	}
	n, err := h.orders.Orders.CountOrders(context.Background(), h.act)
	if err != nil || n != 1 {
		t.Errorf("%d orders (%v), want only the first buyer's", n, err)
	}
	// The leader drops the buyers who left; the next buyer then buys.
	for deadline := time.Now().Add(20 * time.Second); h.svc.Queued(h.act) > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if b := <-h.buy(5); b.err != nil {
		t.Errorf("buyer after the batch: %v", b.err)
	}
}

// Close lets the queued buyers finish, then refuses new ones with 503.
func TestCloseFinishesTheQueueThenRefuses(t *testing.T) {
	h := newHeldService(t, time.Minute, purchase.Config{})
	first := h.buy(1)
	<-h.entered
	second := h.buy(2)
	h.waitQueued(t, 1)
	closed := make(chan struct{})
	go func() { _ = h.svc.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a batch was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(h.release)
	for _, c := range []<-chan bought{first, second} {
		if b := <-c; b.err != nil {
			t.Errorf("user %d, queued before Close: %v, want an order", b.user, b.err)
		}
	}
	<-closed
	if b := <-h.buy(3); code(b.err) != seckill.EUnavailable {
		t.Errorf("buyer after Close: %v, want unavailable", b.err)
	}
}

type verifierFunc func(ctx context.Context, userID, activityID int64) error

func (f verifierFunc) Verify(ctx context.Context, userID, activityID int64) error {
	return f(ctx, userID, activityID)
}

// A verifier that panics fails its buyer with 503, not the process: the
// next buyer of the same activity is served.
func TestPanickingVerifierFailsOnlyItsBuyer(t *testing.T) {
	f := newFixture(t)
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}}, app.Deps{Redis: f.rdb, Locks: lock.New(f.rdb, nil), Orders: f.orders, Users: verifierFunc(func(_ context.Context, userID, _ int64) error {
		if userID == 13 {
			panic("verifier bug")
		}
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	now := time.Now()
	a, err := svc.CreateActivity(context.Background(), seckill.Activity{Name: "Moutai 53%", TotalStock: 5, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 13}); code(err) != seckill.EUnavailable {
		t.Fatalf("buyer whose check panicked: %v, want unavailable", err)
	}
	if _, err := svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: a.ID, UserID: 14}); err != nil {
		t.Fatalf("next buyer: %v, want an order", err)
	}
}

// A buyer who queued before the sale's end and whose batch runs after it is
// told ended, and nothing is sold: the window is checked again when the
// batch is served, not only at the queue's door.
func TestQueuedPastTheEndIsNotSold(t *testing.T) {
	c := &clock{now: time.Now()}
	h := newHeldService(t, time.Minute, purchase.Config{Now: c.Now})
	first := h.buy(1)
	<-h.entered
	second := h.buy(2)
	h.waitQueued(t, 1)
	c.Add(2 * time.Hour) // past the activity's end
	close(h.release)
	if b := <-first; b.err != nil {
		t.Fatalf("the buyer whose batch started before the end: %v", b.err)
	}
	if b := <-second; code(b.err) != seckill.EEnded {
		t.Fatalf("the buyer served after the end: %+v, want ended", b)
	}
	if n, err := h.orders.Orders.CountOrders(context.Background(), h.act); err != nil || n != 1 {
		t.Fatalf("%d orders, %v; want 1", n, err)
	}
}

// All activities' queues of one process hold QueueMaxTotal buyers together;
// one more is told busy, though its activity's own queue has room.
func TestQueuedBuyersAreCappedAcrossActivities(t *testing.T) {
	h := newHeldService(t, time.Minute, purchase.Config{QueueMaxTotal: 3})
	now := time.Now()
	other, err := h.svc.CreateActivity(context.Background(), seckill.Activity{Name: "y", TotalStock: 100, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	buyOther := func(user int64) <-chan bought {
		c := make(chan bought, 1)
		go func() {
			o, err := h.svc.Buy(context.Background(), seckill.BuyRequest{ActivityID: other.ID, UserID: user})
			c <- bought{user, o, err}
		}()
		return c
	}
	// User 1's batches hold both activities' leaders.
	blockers := []<-chan bought{h.buy(1)}
	<-h.entered
	blockers = append(blockers, buyOther(1))
	<-h.entered
	waiting := []<-chan bought{h.buy(2), buyOther(3)}
	for deadline := time.Now().Add(20 * time.Second); h.svc.Queued(h.act)+h.svc.Queued(other.ID) < 2; {
		if time.Now().After(deadline) {
			close(h.release)
			t.Fatal("the two buyers did not queue")
		}
		time.Sleep(time.Millisecond)
	}
	waiting = append(waiting, buyOther(4))
	h.waitQueued(t, 1)
	for deadline := time.Now().Add(20 * time.Second); h.svc.Queued(other.ID) < 2; {
		if time.Now().After(deadline) {
			close(h.release)
			t.Fatal("the third buyer did not queue")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case b := <-h.buy(5):
		if code(b.err) != seckill.EBusy {
			t.Errorf("buyer past the process's cap: %v, want busy", b.err)
		}
	case <-time.After(2 * time.Second):
		t.Error("a buyer past the process's cap of 3 queued buyers was not refused")
		close(h.release)
		return
	}
	close(h.release)
	for _, c := range append(blockers, waiting...) {
		if b := <-c; b.err != nil {
			t.Errorf("user %d: %v, want an order", b.user, b.err)
		}
	}
}

// A queue's memory follows its buyers, not its bound: an activity whose
// queue may hold a million buyers costs no million-slot buffer for one.
func TestQueueMemoryFollowsTheBuyers(t *testing.T) {
	h := newHeldService(t, 0, purchase.Config{QueueMax: 1_000_000})
	close(h.release)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if b := <-h.buy(2); b.err != nil {
		t.Fatal(b.err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("one purchase allocated %d bytes, want far below the 8 MB of a million-slot queue", n)
	}
}

// TestStrictRequiresAPrice: with RequirePrice (SECKILL_STRICT, payments on)
// an activity without a price is refused, and so is removing a price; a
// priced one is created as usual.
// Can fail: without priceRequired, both are accepted.
func TestStrictRequiresAPrice(t *testing.T) {
	orders, err := order.Open(context.Background(), order.SQLitePrefix+":memory:", order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	svc, err := wiring.New(app.Config{Lease: lock.Policy{TTL: time.Second, CallTimeout: 200 * time.Millisecond}, Books: books.Config{RequirePrice: true}}, app.Deps{Redis: rdb, Locks: locks, Orders: orders, Users: usercheck.ApproveAll{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ctx, now := context.Background(), time.Now()
	a := seckill.Activity{Name: "x", TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)}
	if _, err := svc.CreateActivity(ctx, a); code(err) != seckill.EInvalid {
		t.Errorf("unpriced activity: %v, want invalid_request", err)
	}
	a.PriceMinor, a.Currency = 1999, "EUR"
	v, err := svc.CreateActivity(ctx, a)
	if err != nil {
		t.Fatalf("priced activity: %v", err)
	}
	if _, err := svc.SetPrice(ctx, v.ID, 0, ""); code(err) != seckill.EInvalid {
		t.Errorf("removing the price: %v, want invalid_request", err)
	}
}
