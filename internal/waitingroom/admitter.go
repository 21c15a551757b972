package waitingroom

import (
	"context"
	"math"
	"strconv"
	"time"
)

// listEvery is how often an instance reads which rooms exist.
const listEvery = time.Second

// afterEnd is how long after its activity's end a room is still stepped:
// long enough to close it as ended.
const afterEnd = time.Minute

// Run steps every room until ctx ends: the admitter of this instance. Every
// instance runs one; the steps are atomic scripts, so several admitters
// share a room safely and any one of them keeps it moving.
func (r *Room) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.tick(ctx, now)
		}
	}
}

// tick steps each open room, and each room closed as sold out once a
// second (it opens again if a unit came back).
func (r *Room) tick(ctx context.Context, now time.Time) {
	relist := now.Sub(r.listedAt) >= listEvery
	if relist {
		r.list(ctx, now)
	}
	for id, rs := range r.rooms() {
		if ctx.Err() != nil {
			return
		}
		if rs.on && (rs.closed == "" || (relist && rs.closed == "sold_out")) {
			r.step(ctx, id, now)
		}
	}
}

// list reads the rooms from Redis.
func (r *Room) list(ctx context.Context, now time.Time) {
	lctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	rooms, err := r.st.rooms(lctx, now, afterEnd)
	if err != nil {
		r.log.Warn("waiting rooms not listed; stepping the last known", "err", err)
		return
	}
	for id, was := range r.rooms() {
		if now, ok := rooms[id]; was.on && (!ok || !now.on) {
			r.m.forget(id) // turned off or gone: its gauges would stand still
		}
	}
	r.mu.Lock()
	r.known.Store(&rooms)
	r.listedAt = now
	r.mu.Unlock()
}

// step runs one admit.lua for the room and closes it when it is sold out
// and no unit can come back.
func (r *Room) step(ctx context.Context, id int64, now time.Time) {
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	res, err := r.st.admit(sctx, id, Pace{MinRate: r.cfg.MaxRate / 10, MaxRate: r.cfg.MaxRate, TTL: r.cfg.AdmissionTTL, Idle: r.cfg.AdmissionIdle})
	if err != nil {
		r.m.stepFailures.Inc()
		r.log.Debug("waiting room step failed; the next one retries", "activity_id", id, "err", err)
		return
	}
	if rs := r.rooms()[id]; rs.closed != res.closed {
		rs.closed = res.closed
		r.setRoom(id, rs)
	}
	label := strconv.FormatInt(id, 10)
	if res.closed != "" {
		r.m.forget(id) // closed: nobody waits, nothing is admitted
		return
	}
	r.m.waiting.WithLabelValues(label).Set(float64(res.waiting))
	r.m.open.WithLabelValues(label).Set(float64(res.open))
	r.m.admitted.WithLabelValues(label).Add(float64(res.admitted))
	r.m.lapsed.WithLabelValues(label).Add(float64(res.lapsed))
	r.checkETA(label, id, res, now)
	if res.remaining == 0 && res.open == 0 {
		r.closeIfDone(sctx, id, now)
	}
}

// closeIfDone closes a room with no unit left and no admission open once no
// unit can come back: the database's orders hold every unit (none is in
// transit: a purchase that failed after its deduct gives its unit back),
// and with payments on none of them is unpaid (it may expire). The orders
// are counted at most once a second per room, by the admitter, never by a
// poll.
func (r *Room) closeIfDone(ctx context.Context, id int64, now time.Time) {
	r.mu.Lock()
	if now.Sub(r.soldAt[id]) < time.Second {
		r.mu.Unlock()
		return
	}
	r.soldAt[id] = now
	r.mu.Unlock()
	if r.deps.Sold == nil {
		return
	}
	held, unpaid, total, err := r.deps.Sold(ctx, id)
	if err != nil || held < total || (r.cfg.Payments && unpaid > 0) {
		return
	}
	closed, err := r.st.closeSoldOut(ctx, id)
	if err != nil {
		r.log.Debug("waiting room not closed; the next step retries", "activity_id", id, "err", err)
		return
	}
	if closed {
		r.log.Info("waiting room closed: sold out", "activity_id", id)
	}
}

// etaCheck compares what a room's measured rate promised with what came.
type etaCheck struct {
	at    time.Time
	total int64
	rate  float64
}

// etaWindow is how far ahead the ETA check looks.
const etaWindow = 10 * time.Second

// checkETA sets the room's ETA error: every etaWindow, the relative
// difference between the admissions the rate promised a window ago and the
// admissions given since, while people waited.
func (r *Room) checkETA(label string, id int64, res step, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.etaChecks[id]
	if c == nil || res.waiting == 0 {
		r.etaChecks[id] = &etaCheck{at: now, total: res.total, rate: res.rate}
		return
	}
	if now.Sub(c.at) < etaWindow {
		return
	}
	promised := c.rate * now.Sub(c.at).Seconds()
	given := float64(res.total - c.total)
	if promised > 0 || given > 0 {
		r.m.etaError.WithLabelValues(label).Set(math.Abs(promised-given) / math.Max(promised, given))
	}
	*c = etaCheck{at: now, total: res.total, rate: res.rate}
}
