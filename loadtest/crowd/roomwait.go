package main

// The long poll (queue/mine?wait=S, the default; -no-wait polls as told by
// refresh_s), and what each user saw of it: the time from their admission
// to seeing it, from the last sale to seeing closed, and from the start to
// their final answer.

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// holdable is a state a long poll is held in.
func holdable(state string) bool { return state == "prequeue" || state == "waiting" }

// pause is how long a user waits before asking again: nothing while a long
// poll will hold the next ask, otherwise the refresh_s told (a second when
// an answer lacks one, counted as an error).
func (r *roomRun) pause(st queueStatus) time.Duration {
	if r.cfg.wait > 0 && holdable(st.State) {
		return 0
	}
	d := time.Duration(st.RefreshS) * time.Second
	if d <= 0 {
		r.count(&r.statusErrors, "answer without refresh_s: "+st.State, 1)
		d = time.Second
	}
	return d
}

// mineURL is the next ask's URL: held with ?wait= in a holdable state.
func (r *roomRun) mineURL(mine string, st queueStatus) string {
	if r.cfg.wait > 0 && holdable(st.State) {
		return fmt.Sprintf("%s?wait=%d", mine, int(r.cfg.wait/time.Second))
	}
	return mine
}

// maxConns is the connections per instance: with long polls every held
// user keeps one, so none is capped (ulimit -n must allow the crowd).
func (rc roomConfig) maxConns() int {
	if rc.wait > 0 {
		return 0
	}
	return rc.conns
}

// idleConns is the idle connections kept per instance: every user's, with
// long polls (a held user comes back at once).
func (rc roomConfig) idleConns() int {
	if rc.wait > 0 {
		return max(rc.users, rc.conns)
	}
	return rc.conns
}

// transport is the users' shared client: a bounded pool per instance, or
// with -h2c HTTP/2 streams on a fixed set of connections per instance
// (h2cconns.go), as a gateway's upstream carries them (a crowd larger than
// ulimit -n then fits).
func (rc roomConfig) transport() http.RoundTripper {
	if rc.h2c {
		return newH2CConns(rc.users, len(rc.urls))
	}
	return &http.Transport{MaxConnsPerHost: rc.maxConns(), MaxIdleConnsPerHost: rc.idleConns(), IdleConnTimeout: 90 * time.Second}
}

// checkWait refuses a -wait the service would answer 400.
func (rc roomConfig) checkWait() error {
	if rc.wait != 0 && (rc.wait < time.Second || rc.wait > 30*time.Second || rc.wait%time.Second != 0) {
		return fmt.Errorf("-wait %v: want whole seconds from 1s to 30s (or -no-wait)", rc.wait)
	}
	return nil
}

// saw records a state the user was told, and when they first saw closed
// and a final state.
func (r *roomRun) saw(u *user, state string) {
	u.see(state)
	now := r.sinceStart(time.Now())
	if state == "closed" && u.ClosedMs == 0 {
		u.ClosedMs = now
	}
	if finalState(state) && u.FinalMs == 0 {
		u.FinalMs = now
	}
}

// pollReport is what the users saw of admissions and the close: per user
// the admission-to-seen time, the last-sale-to-closed time (the close
// itself is not visible to a client; it follows the last sale by up to
// the admitter's once-a-second check), and the start-to-final times, as
// percentiles and a histogram by second.
func (r *roomRun) pollReport(users []*user) map[string]any {
	var admit, closed, final []float64
	lastSale := r.lastSale.Load()
	hist := map[int64]int{}
	for _, u := range users {
		if u.AdmitMs != 0 && u.SawMs != 0 {
			admit = append(admit, float64(u.SawMs-u.AdmitMs)/1000)
		}
		if u.ClosedMs != 0 && lastSale > 0 {
			closed = append(closed, float64(u.ClosedMs-r.sinceStart(time.Unix(0, lastSale)))/1000)
		}
		if u.FinalMs != 0 {
			final = append(final, float64(u.FinalMs)/1000)
			hist[u.FinalMs/1000]++
		}
	}
	wait := "off (-no-wait: polls as refresh_s says)"
	if r.cfg.wait > 0 {
		wait = r.cfg.wait.String()
	}
	return map[string]any{"wait": wait, "admission_to_seen_s": dist(admit), "last_sale_to_closed_seen_s": dist(closed),
		"start_to_final_s": dist(final), "final_by_second": hist}
}

// dist is the percentiles of xs, in seconds.
func dist(xs []float64) map[string]any {
	if len(xs) == 0 {
		return map[string]any{"n": 0}
	}
	slices.Sort(xs)
	at := func(f float64) float64 { return round2(xs[int(f*float64(len(xs)-1))]) }
	return map[string]any{"n": len(xs), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": at(1)}
}
