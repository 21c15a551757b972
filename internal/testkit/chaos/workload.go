package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seckill-oss/seckill/internal/payment"
)

// answerTimeout is how long a client waits for an answer before it counts
// the operation as unknown.
const answerTimeout = 6 * time.Second

// workload is the campaign's clients: buyers with and without
// Idempotency-Key retrying as docs/API.md says, repeats, result-page
// polls, payments with signed callbacks (late, doubled, out of order), and
// now and then an operator's preload, audit or reconcile.
type workload struct {
	c          *cluster
	h          *History
	activities []int64
	// open are the open activities (campaign.go): each has a client of
	// its own that buys nothing else, and their buyers are not remembered
	// for the other clients' repeats, polls and payments.
	open []int64
	// own are the activities whose buyers are not remembered for the
	// other clients' repeats, polls and payments: the open ones and the
	// waiting room's, which clients of their own buy.
	own []int64
	// room is the activity with a waiting room (0: none), roomClients
	// the clients that go through it.
	room        int64
	roomClients int
	// limits are the activities that sell more than one unit a buyer:
	// their per_user_limit. Their buyers ask for 1..limit units.
	limits map[int64]int
	seed   int64
	client *http.Client

	mu        sync.Mutex
	held      []holding // buyers who were told they hold an order
	nextID    map[int64]int64
	purchases int // numbers the purchases (Op.Purchase)

	// watchers are the result pages open now (watch), at most
	// cap(watching) at once.
	watchers sync.WaitGroup
	watching chan struct{}
}

// holding is a buyer the history says holds an order.
type holding struct {
	activity, user int64
	order          string
	// quantity is the units the buyer asks for; 0 sends no body (one).
	quantity int
}

// maxWatchers bounds the result pages open at once (watch).
const maxWatchers = 4

// run starts n clients, and one for each open activity, and returns when
// ctx ends and each has finished its operation in flight, and every result
// page it opened has closed. The open activities' clients draw from streams
// of their own: the n clients choose what they chose before those existed.
func (w *workload) run(ctx context.Context, seed int64, n int) {
	w.watching = make(chan struct{}, maxWatchers)
	var wg sync.WaitGroup
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)+1))
		wg.Go(func() { w.client1(ctx, i, rng) })
	}
	for k, a := range w.open {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x09e4+uint64(k)))
		wg.Go(func() { w.openClient(ctx, n+k, rng, a) })
	}
	for k := range w.roomClients {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x4005+uint64(k)))
		wg.Go(func() { w.roomClient(ctx, n+len(w.open)+k, rng) })
	}
	wg.Wait()
	w.watchers.Wait()
}

// openClient is an open activity's client: one new buyer after another.
func (w *workload) openClient(ctx context.Context, id int, rng *rand.Rand, activity int64) {
	for ctx.Err() == nil {
		w.purchase(ctx, id, rng, w.newBuyerOf(activity))
		sleep(ctx, time.Duration(10+rng.IntN(60))*time.Millisecond)
	}
}

func (w *workload) client1(ctx context.Context, id int, rng *rand.Rand) {
	for ctx.Err() == nil {
		switch p := rng.IntN(100); {
		case p < 50:
			w.purchase(ctx, id, rng, w.newBuyer(rng))
		case p < 60:
			if h, ok := w.someHolder(rng); ok {
				w.purchase(ctx, id, rng, h)
			}
		case p < 75:
			if h, ok := w.someHolder(rng); ok {
				w.poll(id, rng, h)
			}
		case p < 95:
			if h, ok := w.someHolder(rng); ok {
				w.pay(ctx, id, rng, h)
			}
		default:
			w.operate(id, rng)
		}
		sleep(ctx, time.Duration(10+rng.IntN(60))*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (w *workload) newBuyer(rng *rand.Rand) holding {
	return w.newBuyerOf(w.activities[rng.IntN(len(w.activities))])
}

func (w *workload) newBuyerOf(a int64) holding {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID[a]++
	b := holding{activity: a, user: a*1_000_000 + w.nextID[a]}
	if limit := w.limits[a]; limit > 0 {
		// Drawn from the user, not from a client's stream: the clients
		// draw what they drew before quantities existed.
		b.quantity = 1 + int(mix(uint64(w.seed)^uint64(b.user))%uint64(limit))
	}
	return b
}

// mix is SplitMix64's finalizer: a well spread number of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (w *workload) someHolder(rng *rand.Rand) (holding, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return holding{}, false
	}
	return w.held[rng.IntN(len(w.held))], true
}

func (w *workload) remember(h holding) {
	if slices.Contains(w.own, h.activity) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, h)
}

func (w *workload) newPurchase() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.purchases++
	return w.purchases
}

// purchase buys the buyer's units (one, or its quantity), retrying 429,
// 503 unavailable and transport errors after Retry-After plus jitter (with
// the same Idempotency-Key, when it sends one), at most four times; a 503
// outcome_unknown is followed by a look at orders/mine, as the contract
// says.
func (w *workload) purchase(ctx context.Context, client int, rng *rand.Rand, b holding) {
	key := ""
	if rng.IntN(10) < 7 {
		key = "k" + strconv.FormatInt(b.user, 36) + "-" + strconv.Itoa(rng.IntN(1000))
	}
	n := w.newPurchase()
	var body []byte
	if b.quantity > 0 {
		body = fmt.Appendf(nil, `{"quantity":%d}`, b.quantity)
	}
	for try := 0; try < 4 && ctx.Err() == nil; try++ {
		op := w.send(client, rng, Op{Kind: "buy", Activity: b.activity, User: b.user, Key: key, Purchase: n, Quantity: b.quantity},
			"POST", fmt.Sprintf("/api/v1/activities/%d/orders", b.activity), body)
		switch {
		case op.Status == http.StatusCreated || op.Code == "already_purchased":
			b.order = op.Order
			w.remember(b)
			return
		case op.Code == "outcome_unknown" || op.Unknown:
			if v := w.send(client, rng, Op{Kind: "poll", Activity: b.activity, User: b.user, Purchase: n}, "GET",
				fmt.Sprintf("/api/v1/activities/%d/orders/mine", b.activity), nil); v.Status == http.StatusOK {
				b.order = v.Order
				w.remember(b)
			}
		case retried(*op.Op):
		default:
			return // a final answer: sold_out, user_rejected, ...
		}
		sleep(ctx, op.retryAfter+time.Duration(rng.IntN(400))*time.Millisecond)
	}
}

// retried reports whether a purchase's answer is one the buyer tries again
// after: 429, 503 unavailable, a refused connection, any other 5xx (an
// outcome_unknown or an unknown completion is looked up first).
func retried(o Op) bool {
	return o.Unknown || o.Code == "outcome_unknown" || o.Status == http.StatusTooManyRequests ||
		o.Code == "unavailable" || o.Code == "refused" || o.Status >= 500
}

// poll asks for the buyer's order (the result page), which verifies a
// created one with the payment provider.
func (w *workload) poll(client int, rng *rand.Rand, b holding) {
	op := w.viewMine(client, rng, b)
	if op.Status == http.StatusOK {
		b.order = op.Order
		w.remember(b)
	}
}

// viewMine is one view of the buyer's result page (orders/mine).
func (w *workload) viewMine(client int, rng *rand.Rand, b holding) sent {
	return w.send(client, rng, Op{Kind: "poll", Activity: b.activity, User: b.user}, "GET", fmt.Sprintf("/api/v1/activities/%d/orders/mine", b.activity), nil)
}

// pay plays the buyer paying and the provider's callbacks: paid in time
// with one or two callbacks at once, a callback before the payment (out
// of order), a payment after the window (late: refund_required), or a
// failed one.
func (w *workload) pay(ctx context.Context, client int, rng *rand.Rand, b holding) {
	if b.order == "" {
		return
	}
	set := func(status string) {
		op := w.h.Invoke(Op{Client: client, Kind: "pay", Instance: -1, Activity: b.activity, User: b.user, Order: b.order, Detail: "provider " + status})
		w.c.payStub.SetPayment(b.order, status)
		op.Status = http.StatusOK
		w.h.Done(op)
	}
	switch rng.IntN(5) {
	case 0: // paid, one callback
		set(payment.PaymentPaid)
		w.callback(client, rng, b)
	case 1: // paid, the callback twice at once
		set(payment.PaymentPaid)
		// A generator each: a rand.Rand is not safe for concurrent use.
		r1 := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		r2 := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		var wg sync.WaitGroup
		wg.Go(func() { w.callback(client, r1, b) })
		wg.Go(func() { w.callback(client, r2, b) })
		wg.Wait()
	case 2: // the callback before the payment, then again after it
		w.callback(client, rng, b)
		sleep(ctx, time.Duration(rng.IntN(500))*time.Millisecond)
		set(payment.PaymentPaid)
		w.callback(client, rng, b)
	case 3: // paid after the window: late
		sleep(ctx, w.c.cfg.PaymentWindow+time.Duration(rng.IntN(1000))*time.Millisecond)
		set(payment.PaymentPaid)
		w.callback(client, rng, b)
	default: // the payment failed: the buyer stays on the result page
		set(payment.PaymentFailed)
		w.callback(client, rng, b)
		w.watch(ctx, client, rng, b)
	}
}

// watchFor is how long a result page stays open: past the longest hold of
// a late-status-commit (faults.go), so a page is still polling when a
// verification that gave up on a held COMMIT has let the order's lock go.
const watchFor = 40 * time.Second

// watch opens the buyer's result page, as the app does after a payment that
// failed: it polls about once a second until the order leaves created (it
// expires at its deadline) or watchFor passes. Each poll may run a
// verification, so these polls are the second verification that meets one
// whose COMMIT a late-status-commit holds. The page polls beside the
// client's next operations, as a buyer's phone would; when maxWatchers
// pages are open already it is not opened.
func (w *workload) watch(ctx context.Context, client int, rng *rand.Rand, b holding) {
	select {
	case w.watching <- struct{}{}:
	default:
		return
	}
	// A generator of its own: a rand.Rand is not safe for concurrent use.
	r := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	w.watchers.Go(func() {
		defer func() { <-w.watching }()
		for end := time.Now().Add(watchFor); ctx.Err() == nil && time.Now().Before(end); {
			op := w.viewMine(client, r, b)
			if op.Status == http.StatusOK && op.OrderStatus != "" && op.OrderStatus != "created" {
				return
			}
			sleep(ctx, time.Duration(500+r.IntN(500))*time.Millisecond)
		}
	})
}

func (w *workload) callback(client int, rng *rand.Rand, b holding) {
	body, _ := json.Marshal(map[string]string{"order_id": b.order})
	// Timestamped, as the secure defaults require
	// (SECKILL_PAYMENT_REQUIRE_TIMESTAMP): a body-only signature is 401.
	ts, sig := payment.SignAt(w.c.cfg.paymentSecret, body, time.Now())
	w.send(client, rng, Op{Kind: "callback", Activity: b.activity, User: b.user, Order: b.order}, "POST", "/api/v1/payments/callback", body,
		"X-Signature", sig, "X-Signature-Timestamp", ts)
}

// operate is an operator's preload, audit or reconcile of an activity.
func (w *workload) operate(client int, rng *rand.Rand) {
	a := w.activities[rng.IntN(len(w.activities))]
	kind, method, path := "audit", "GET", fmt.Sprintf("/admin/v1/activities/%d/audit", a)
	switch rng.IntN(5) {
	case 0:
		kind, method, path = "preload", "POST", fmt.Sprintf("/admin/v1/activities/%d/preload", a)
	case 1:
		kind, method, path = "reconcile", "POST", fmt.Sprintf("/admin/v1/activities/%d/reconcile", a)
	}
	w.send(client, rng, Op{Kind: kind, Activity: a}, method, path, nil, "Authorization", "Bearer "+w.c.cfg.adminToken)
}
