package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// runHealthz measures GET /healthz on each URL in turn for d with conns
// workers on one shared client (keep-alive), and prints one JSON line:
// answers/s per URL. loadtest/room.sh uses wrk when it is installed; this
// is the fallback.
func runHealthz(urls []string, conns int, d time.Duration) error {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns}}
	out := make([]map[string]any, 0, len(urls))
	for _, base := range urls {
		var ok, bad atomic.Int64
		deadline := time.Now().Add(d)
		var wg sync.WaitGroup
		t0 := time.Now()
		for range conns {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					res, err := client.Get(base + "/healthz")
					if err != nil {
						bad.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode == http.StatusOK {
						ok.Add(1)
					} else {
						bad.Add(1)
					}
				}
			})
		}
		wg.Wait()
		secs := time.Since(t0).Seconds()
		out = append(out, map[string]any{"url": base, "answers": ok.Load(), "errors": bad.Load(), "per_s": round2(float64(ok.Load()) / secs)})
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"healthz": out, "conns": conns, "seconds": d.Seconds()})
}
