// Package outbox relays the order events the order store writes into its
// outbox table (internal/order events.go) to a sink: a Redis stream or a
// Kafka topic. Every instance runs a relay. A relay claims unsent rows with
// a lease, so that one row is sent by one relay at a time; it marks them
// sent only once the sink acknowledged them, and a relay that dies mid-send
// leaves its lease to lapse, after which another relay sends the rows again:
// delivery is at least once, and consumers dedupe on the event id. The
// claim hands out only the first unsent event of each order, so one order's
// events leave in sequence order.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
)

// Store is the outbox table as the relay uses it (*order.Outbox).
type Store interface {
	ClaimEvents(ctx context.Context, claim string, now time.Time, lease time.Duration, limit int) ([]order.Event, error)
	MarkEventsSent(ctx context.Context, ids []string, at time.Time) error
	ReleaseEvents(ctx context.Context, claim string, ids []string) error
	MarkBatchesSent(ctx context.Context, ids []int64, at time.Time) error
	ReleaseBatches(ctx context.Context, owner string, ids []int64) error
	DeleteEvents(ctx context.Context, before time.Time, unrelayed bool, limit int) (int64, error)
	PendingEvents(ctx context.Context) (n int64, oldest time.Time, err error)
}

// A Sink delivers events. Send returns nil only once the sink acknowledged
// every event given, durably as the sink knows it; on an error any of them
// may or may not have been delivered, and they are sent again later. Send
// must keep the events' order for events of one order.
type Sink interface {
	Send(ctx context.Context, events []order.Event) error
	Close() error
}

// Config tunes a relay; zero values take the defaults.
type Config struct {
	// Retention is how long sent events stay in the table (default 24h).
	Retention time.Duration
	// Lease is how long a claim keeps other relays off its rows (default
	// 30s): longer than a send takes, or rows are sent twice.
	Lease time.Duration
	// Batch is the most events claimed at once (default 500).
	Batch int
	// Poll is the pause after a claim that did not fill a batch (default
	// 100ms): claiming again at once would send the few rows committed
	// meanwhile at a batch's whole cost in statements. An order's next
	// event, held back behind the one just sent, waits one Poll.
	Poll time.Duration
	// SendTimeout bounds one Send (default 10s, at most Lease).
	SendTimeout time.Duration
	Log         *slog.Logger
	Metrics     *Metrics // nil: none
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Retention, 24*time.Hour)
	def(&c.Lease, 30*time.Second)
	def(&c.Poll, 100*time.Millisecond)
	def(&c.SendTimeout, 10*time.Second)
	c.SendTimeout = min(c.SendTimeout, c.Lease)
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Relay moves events from a Store to a Sink until Close. A nil sink
// (SECKILL_EVENTS=off) relays nothing and only deletes events older than the
// retention: a shop reads them by change data capture.
type Relay struct {
	store Store
	sink  Sink
	cfg   Config
	id    string // this relay's part of its claims' tokens
	n     uint64 // claims made
	stop  context.CancelFunc
	done  chan struct{}
	// handed are the created events this instance's group commit committed
	// and handed off (handoff.go), leased to handoffOwner.
	handed    chan handedBatch
	lastStats time.Time // when the backlog was last measured for the metrics
	lastPrune time.Time
}

// Start starts a relay; Close stops it.
func Start(store Store, sink Sink, cfg Config) *Relay {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Relay{store: store, sink: sink, cfg: cfg.withDefaults(), id: newRelayID(), stop: cancel, done: make(chan struct{}),
		handed: make(chan handedBatch, handedBuffer)}
	go r.run(ctx)
	return r
}

// Close stops the relay once the send in flight is done (or its timeout
// ended) and closes the sink. Events claimed and not acknowledged are sent
// again by any relay once their lease lapses.
func (r *Relay) Close() error {
	r.stop()
	<-r.done
	if r.sink == nil {
		return nil
	}
	r.releaseHanded()
	return r.sink.Close()
}

func (r *Relay) run(ctx context.Context) {
	defer close(r.done)
	pause := r.cfg.Poll
	next := time.Now() // the next claim
	for ctx.Err() == nil {
		if !time.Now().Before(next) {
			r.housekeeping(ctx)
			sent, err := r.Step(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				r.cfg.Log.Warn("events: relay step failed; the events wait", "err", err, "retry_in", pause.String())
				// A failing sink or database is tried less and less often, up
				// to maxPause apart; one that answers is polled at Poll again.
				pause = min(2*pause, maxPause)
			case err == nil:
				pause = r.cfg.Poll
			}
			next = time.Now().Add(pause)
			if err == nil && sent >= r.cfg.Batch {
				next = time.Now() // a full batch: more wait
			}
		}
		wait := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
		case <-wait.C:
		case b := <-r.handed:
			r.sendHanded(ctx, b)
		}
		wait.Stop()
	}
}

// maxPause is the longest wait between a relay's attempts on a failing sink.
const maxPause = 2 * time.Second

// Step claims one batch, sends it and marks it sent, and returns how many
// events it sent. Without a sink it does nothing.
func (r *Relay) Step(ctx context.Context) (int, error) {
	if r.sink == nil {
		return 0, nil
	}
	r.n++
	claim := r.id + "-" + strconv.FormatUint(r.n, 16)
	events, err := r.store.ClaimEvents(ctx, claim, time.Now(), r.cfg.Lease, r.cfg.Batch)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	sendCtx, cancel := context.WithTimeout(ctx, r.cfg.SendTimeout)
	err = r.sink.Send(sendCtx, events)
	cancel()
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	if err != nil {
		r.cfg.Metrics.sendFailed()
		// Any relay may try them again at once; a lease left to lapse would
		// hold them (and their orders' later events) back for its length.
		relCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return 0, errors.Join(errSend, err, r.store.ReleaseEvents(relCtx, claim, ids))
	}
	// Marked sent with a context of its own: the sink has the events, and a
	// relay stopping now should not leave them to be sent twice.
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.store.MarkEventsSent(markCtx, ids, time.Now()); err != nil {
		return 0, err
	}
	r.cfg.Metrics.sent(len(events))
	return len(events), nil
}

// errSend: the sink did not acknowledge a batch.
var errSend = errors.New("outbox: the sink did not acknowledge the events")

// housekeeping measures the backlog for the metrics every second and deletes
// events past the retention every minute.
func (r *Relay) housekeeping(ctx context.Context) {
	now := time.Now()
	if r.cfg.Metrics != nil && r.sink != nil && now.Sub(r.lastStats) >= time.Second {
		r.lastStats = now
		if n, oldest, err := r.store.PendingEvents(ctx); err == nil {
			r.cfg.Metrics.backlog(n, oldest, now)
		}
	}
	if now.Sub(r.lastPrune) < time.Minute {
		return
	}
	r.lastPrune = now
	for ctx.Err() == nil {
		n, err := r.store.DeleteEvents(ctx, now.Add(-r.cfg.Retention), r.sink == nil, 1000)
		if err != nil {
			r.cfg.Log.Warn("events: delete events past the retention", "err", err)
			return
		}
		if n < 1000 {
			return
		}
	}
}

// newRelayID names a relay in its claims' tokens: random, so that two
// instances (or a restarted one) never share a token.
func newRelayID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
