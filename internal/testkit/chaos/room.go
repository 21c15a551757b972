package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// The waiting room's part of the workload (docs/API.md "Waiting room"): one
// activity of roomStock units has a room, and roomClients clients of their
// own go through it, one new buyer after another. Fewer units than buyers
// who want one at once keep a line waiting; the unpaid orders' expiries
// give the units back to the next in line.
const (
	roomClients = 6
	roomStock   = 4
	// admissionTTL is the instances' SECKILL_ADMISSION_TTL: short, so
	// the admissions let lapse give their unit to the next in line often.
	admissionTTL = 3 * time.Second
	// roomWait is how long a buyer waits in line before it leaves.
	roomWait = 40 * time.Second
	// quietSettle and quietFor are the room's quiet phase (quietRoom).
	quietSettle = 10 * time.Second
	quietFor    = 30 * time.Second
)

// quietRoom runs the room's clients alone for quietFor, once every fault is
// healed and quietSettle has passed (the books sweep's repairs of what the
// faults left: a unit of a killed batch, a write a failover lost). Faults
// act or linger nearly all through the campaign, and each may take an
// admitted buyer's unit for a while (docs/DESIGN.md "what admissions cannot
// cover"), so the faulted part holds few purchases to "no admitted buyer
// told sold_out"; in this phase every admitted purchase is held to it.
// The clients draw from streams of their own.
func (w *workload) quietRoom(ctx context.Context, seed int64, client int) {
	sleep(ctx, quietSettle)
	qctx, cancel := context.WithTimeout(ctx, quietFor)
	defer cancel()
	var wg sync.WaitGroup
	for k := range w.roomClients {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x9013+uint64(k)))
		wg.Go(func() { w.roomClient(qctx, client+k, rng) })
	}
	wg.Wait()
}

// roomClient is a room's client: one new buyer after another.
func (w *workload) roomClient(ctx context.Context, id int, rng *rand.Rand) {
	for ctx.Err() == nil {
		w.roomVisit(ctx, id, rng, w.newBuyerOf(w.room))
		sleep(ctx, time.Duration(10+rng.IntN(60))*time.Millisecond)
	}
}

// roomVisit is one buyer's visit to the room. One in five tries to buy
// without joining (the room must refuse: 403 not_admitted). The others join
// and poll queue/mine until admitted (or closed, or roomWait passes); then
// three in four buy, and the fourth lets its admission lapse, looks at its
// state after admitted_until and, half the time, tries to buy then (refused
// again). A buyer the history saw admitted and told sold_out, or sold to
// without an admission, breaks the room's invariants (checkroom.go).
func (w *workload) roomVisit(ctx context.Context, client int, rng *rand.Rand, b holding) {
	if rng.IntN(5) == 0 {
		w.purchase(ctx, client, rng, b)
		return
	}
	op := w.queue(client, rng, b, "POST", 0)
	// Half the visits long-poll (queue/mine?wait=S, held until their state
	// changes), half poll as told: both must see the same room.
	wait := 0
	if rng.IntN(2) == 0 {
		wait = 1 + rng.IntN(longPollMax)
	}
	for end := time.Now().Add(roomWait); ctx.Err() == nil && time.Now().Before(end); {
		if op.QueueState != "" && op.QueueState != "waiting" && op.QueueState != "prequeue" {
			break
		}
		// The refresh the service asks for, at most a second, so the
		// line's head buys soon after its admission; a long poll needs
		// no pause but after a failed answer.
		pause := min(op.refresh, time.Second)
		if wait > 0 && op.Status == http.StatusOK {
			pause = 0
		}
		sleep(ctx, pause+time.Duration(rng.IntN(200))*time.Millisecond)
		if op.QueueState == "" && op.Status != http.StatusOK {
			op = w.queue(client, rng, b, "POST", 0) // the join failed: join again
		} else {
			op = w.queue(client, rng, b, "GET", wait)
		}
	}
	if op.QueueState != "admitted" || ctx.Err() != nil {
		return
	}
	if rng.IntN(4) > 0 {
		w.purchase(ctx, client, rng, b)
		return
	}
	sleep(ctx, time.Until(op.AdmittedUntil)+time.Second+time.Duration(rng.IntN(1000))*time.Millisecond)
	w.queue(client, rng, b, "GET", 0)
	if rng.IntN(2) == 0 {
		w.purchase(ctx, client, rng, b)
	}
}

// queued is a join's or a queue/mine read's answer.
type queued struct {
	sent
	refresh time.Duration
}

// longPollMax is the longest wait a room visit's long poll asks for:
// within answerTimeout, which a held answer must beat.
const longPollMax = 4

// queue joins the room (POST) or reads the buyer's place (GET), held up to
// wait seconds (0: answered at once).
func (w *workload) queue(client int, rng *rand.Rand, b holding, method string, wait int) queued {
	kind, path := "join", fmt.Sprintf("/api/v1/activities/%d/queue", b.activity)
	if method == "GET" {
		kind, path = "queue", path+"/mine"
		if wait > 0 {
			path += fmt.Sprintf("?wait=%d", wait)
		}
	}
	s := w.send(client, rng, Op{Kind: kind, Activity: b.activity, User: b.user}, method, path, nil)
	q := queued{sent: s, refresh: time.Second}
	if s.retryAfter > 0 {
		q.refresh = s.retryAfter
	}
	return q
}
