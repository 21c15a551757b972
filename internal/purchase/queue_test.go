package purchase_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/app"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/testkit/wiring"
)

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
