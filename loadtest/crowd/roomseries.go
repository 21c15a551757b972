package main

// The waiting-room crowd's time series: one sample of the activity and of
// the crowd every second.

import (
	"context"
	"sync/atomic"
	"time"
)

// sample is one second of the time series.
type sample struct {
	t                          float64 // seconds since starts_at
	waiting, admitted, remain  int64
	polls, sold                int64
	prequeue, waitingU, admitU int64 // the crowd's users by last state
	final                      int64
}

func (r *roomRun) stateCount(s string) int64 {
	if v, ok := r.states.Load(s); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// sampler reads the activity every second until stop is closed.
func (r *roomRun) sampler(ctx context.Context, stop <-chan struct{}) []sample {
	var out []sample
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-ctx.Done():
			return out
		case now := <-t.C:
			s := sample{t: now.Sub(r.starts).Seconds(), polls: r.secPolls.Swap(0), sold: r.sold.Load(),
				prequeue: r.stateCount("prequeue"), waitingU: r.stateCount("waiting"), admitU: r.stateCount("admitted"),
				final: r.stateCount("done") + r.stateCount("closed") + r.stateCount("lapsed") + r.stateCount("gone"), waiting: -1, admitted: -1, remain: -1}
			actx, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
			if a, err := r.activity(actx, r.probe, r.cfg.urls[0]); err == nil {
				s.remain = a.RemainingStock
				if a.WaitingRoom != nil {
					s.waiting, s.admitted = a.WaitingRoom.Waiting, a.WaitingRoom.Admitted
				}
			}
			cancel()
			out = append(out, s)
		}
	}
}
