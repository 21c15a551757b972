package main

// One simulated buyer of the waiting-room crowd: what it saw, and its life
// from the join to a final state.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// queueStatus is the service's queue answer.
type queueStatus struct {
	State         string `json:"state"`
	Position      int64  `json:"position"`
	ETA           *int64 `json:"eta_s"`
	RefreshS      int64  `json:"refresh_s"`
	AdmittedUntil string `json:"admitted_until"`
	OrderID       string `json:"order_id"`
	Reason        string `json:"reason"`
}

// finalState: "gone" is a no-show's (-no-show): admitted, it neither buys
// nor polls again.
func finalState(s string) bool { return s == "done" || s == "closed" || s == "lapsed" || s == "gone" }

// noShow reports whether the user is one of the share of admitted users
// who never buy and stop polling: a fixed draw by user id, so runs with
// the same share pick the same users, independent of the join order.
func noShow(userID int64, share float64) bool {
	if share <= 0 {
		return false
	}
	x := uint64(userID) * 0x9E3779B97F4A7C15 // Fibonacci hashing spreads ids evenly
	x ^= x >> 29
	return float64(x%1_000_000)/1_000_000 < share
}

// user is one simulated buyer and what it saw.
type user struct {
	ID        int64  `json:"user_id"`
	Rank      int    `json:"join_rank"`
	URL       int    `json:"instance"`
	JoinState string `json:"join_state"` // the join's state, or its error code
	JoinMs    int64  `json:"join_ms"`    // sent, ms since starts_at (negative: before)
	Retries   int    `json:"retries"`    // answers not final (429, 503, transport) retried
	Polls     int    `json:"polls"`
	FirstPos  int64  `json:"first_position,omitempty"`
	FirstETA  int64  `json:"first_eta_s"` // -1: never told one while waiting
	ETAMs     int64  `json:"first_eta_at_ms,omitempty"`
	AdmitMs   int64  `json:"admitted_at_ms,omitempty"` // admitted_until - TTL, ms since starts_at
	SawMs     int64  `json:"saw_admitted_ms,omitempty"`
	Buy       string `json:"purchase,omitempty"` // first final purchase answer
	Buys      int    `json:"purchases"`
	BuyMs     int64  `json:"purchase_ms,omitempty"`
	ClosedMs  int64  `json:"saw_closed_ms,omitempty"`
	FinalMs   int64  `json:"final_ms,omitempty"` // first final answer, ms since starts_at
	Final     string `json:"final_state"`
	Reason    string `json:"reason,omitempty"`
	Trail     string `json:"trail"` // the states seen, in order, repeats folded
	PosGrew   int    `json:"position_grew,omitempty"`
	admitted  bool
	lastPos   int64
}

func (u *user) see(state string) {
	if i := strings.LastIndexByte(u.Trail, '>'); u.Trail == "" || u.Trail[i+1:] != state {
		if u.Trail != "" {
			u.Trail += ">"
		}
		u.Trail += state
	}
}

// live is one user's life: join, poll as told, buy once admitted, poll on
// until a final state.
func (r *roomRun) live(ctx context.Context, u *user) {
	base := r.cfg.urls[u.URL]
	queue := fmt.Sprintf("%s/api/v1/activities/%d/queue", base, r.cfg.activity)
	mine := queue + "/mine"
	orders := fmt.Sprintf("%s/api/v1/activities/%d/orders", base, r.cfg.activity)
	last := ""
	setState := func(s string) {
		if s != last {
			if last != "" {
				r.count(&r.states, last, -1)
			}
			r.count(&r.states, s, 1)
			last = s
		}
		r.saw(u, s)
	}
	defer func() {
		u.Final = last
		if !finalState(last) {
			u.see("(gave up)")
		}
		r.left.Add(-1)
	}()

	// Join, retrying what is not final.
	u.JoinMs = r.sinceStart(time.Now())
	var st queueStatus
	for {
		r.joins[u.URL].Add(1)
		status, code, body, after := r.call(ctx, "join", http.MethodPost, queue, u.ID)
		if status == http.StatusOK {
			if err := json.Unmarshal(body, &st); err != nil {
				r.count(&r.statusErrors, "join: bad body", 1)
				setState("bad_answer")
				return
			}
			u.JoinState = st.State
			break
		}
		r.count(&r.statusErrors, fmt.Sprintf("join: %d %s", status, code), 1)
		if !retryable(status) || ctx.Err() != nil {
			u.JoinState = fmt.Sprintf("%d %s", status, code)
			setState("join_refused")
			return
		}
		u.Retries++
		if !sleep(ctx, max(after, time.Second)) {
			return
		}
	}

	for {
		now := time.Now()
		setState(st.State)
		switch st.State {
		case "waiting":
			if st.ETA != nil && u.FirstETA < 0 {
				u.FirstETA, u.ETAMs = *st.ETA, r.sinceStart(now)
			}
			if u.FirstPos == 0 {
				u.FirstPos = st.Position
			}
			if u.lastPos > 0 && st.Position > u.lastPos {
				u.PosGrew++
			}
			u.lastPos = st.Position
		case "admitted":
			if !u.admitted {
				u.admitted = true
				u.SawMs = r.sinceStart(now)
				if t, err := time.Parse(time.RFC3339Nano, st.AdmittedUntil); err == nil {
					u.AdmitMs = r.sinceStart(t.Add(-r.cfg.admissionTTL))
				}
			}
			if noShow(u.ID, r.cfg.noShow) {
				setState("gone")
				return
			}
			if u.Buy == "" {
				r.buy(ctx, u, orders)
			}
		default:
			if finalState(st.State) {
				u.Reason = st.Reason
				return
			}
		}
		// Sleep exactly what the service said, or hold a long poll.
		d := r.pause(st)
		for {
			if !sleep(ctx, d) {
				return
			}
			r.polls[u.URL].Add(1)
			r.secPolls.Add(1)
			u.Polls++
			status, code, body, after := r.call(ctx, "poll", http.MethodGet, r.mineURL(mine, st), u.ID)
			if status == http.StatusOK {
				var next queueStatus
				if err := json.Unmarshal(body, &next); err == nil {
					st = next
					break
				}
				code = "bad body"
			}
			r.count(&r.statusErrors, fmt.Sprintf("poll: %d %s", status, code), 1)
			if !retryable(status) {
				setState(fmt.Sprintf("poll_%d_%s", status, code))
				return
			}
			u.Retries++
			d = max(after, time.Second)
		}
	}
}

// buy is an admitted user's purchase: its first final answer is kept; an
// answer that is not final (429, 503) is counted and tried again later.
func (r *roomRun) buy(ctx context.Context, u *user, orders string) {
	u.Buys++
	r.buys[u.URL].Add(1)
	status, code, _, _ := r.call(ctx, "purchase", http.MethodPost, orders, u.ID)
	answer := strconv.Itoa(status)
	if code != "" {
		answer += " " + code
	}
	if status == http.StatusCreated {
		r.sold.Add(1)
		r.lastSale.Store(time.Now().UnixNano())
	}
	if !retryable(status) {
		u.Buy, u.BuyMs = answer, r.sinceStart(time.Now())
	} else {
		r.count(&r.statusErrors, "purchase: "+answer, 1)
		u.Retries++
	}
}
