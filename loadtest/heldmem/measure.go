package main

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// meter reads the instance's memory and Redis commands.
type meter struct {
	svc *service
	ctr *counter
	rdb *redis.Client
}

// step is what one count of held requests measured.
type step struct {
	Held         int                `json:"held"`
	RSSKB        int64              `json:"rss_kb"`             // VmRSS at the window's end
	RSSStartKB   int64              `json:"rss_start_kb"`       // and at its start
	Runtime      runtimeMemory      `json:"runtime"`            // /metrics at the window's end
	AfterGC      *runtimeMemory     `json:"after_gc,omitempty"` // and after a forced GC, at the largest count only
	WindowS      float64            `json:"window_s"`
	CmdsPerS     float64            `json:"commands_per_s"` // the instance's, through the proxy
	ByName       map[string]float64 `json:"commands_per_s_by_name"`
	RedisAllPerS float64            `json:"redis_all_per_s"` // INFO total_commands_processed: every client of Redis
	Retried      int64              `json:"retried_503"`     // requests answered 503 while the count started, asked again
}

// measure reads VmRSS, the runtime's memory and the command counts over
// window.
func (m *meter) measure(held int, window time.Duration) (step, error) {
	pid := m.svc.cmd.Process.Pid
	rss0, err := rssKB(pid)
	if err != nil {
		return step{}, err
	}
	total0, names0 := m.ctr.snapshot()
	all0, err := totalCommands(m.rdb)
	if err != nil {
		return step{}, err
	}
	t0 := time.Now()
	time.Sleep(window)
	total1, names1 := m.ctr.snapshot()
	all1, err := totalCommands(m.rdb)
	if err != nil {
		return step{}, err
	}
	secs := time.Since(t0).Seconds()
	st := step{Held: held, RSSStartKB: rss0, WindowS: round1(secs), ByName: map[string]float64{},
		CmdsPerS: round1(float64(total1-total0) / secs), RedisAllPerS: round1(float64(all1-all0) / secs)}
	for name := range maps.Keys(names1) {
		if d := names1[name] - names0[name]; d > 0 {
			st.ByName[name] = round1(float64(d) / secs)
		}
	}
	if st.RSSKB, err = rssKB(pid); err != nil {
		return st, err
	}
	st.Runtime, err = m.svc.memory()
	return st, err
}

// awaitSettled waits until the instance's goroutines stop changing (its
// held requests are all in their hold), at most for d.
func (m *meter) awaitSettled(d time.Duration) {
	last := int64(-1)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Second) {
		mem, err := m.svc.memory()
		if err == nil && mem.Goroutines == last {
			return
		}
		last = mem.Goroutines
	}
}

// totalCommands reads INFO stats total_commands_processed.
func totalCommands(rdb *redis.Client) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "stats").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("INFO stats has no total_commands_processed")
}
