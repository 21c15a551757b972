// Command crowd is a flash-sale crowd for loadtest/bench.sh: N buyers, each
// with a user id and a connection of its own, press "buy" once at the same
// moment. It prints, as one JSON line, how many first answers were final
// (201, or 409 sold_out) and the answers by code, with latency percentiles.
// It only targets loopback addresses.
//
// With -room it is instead the crowd of a sale behind a waiting room
// (room.go, for loadtest/room.sh): -users buyers join the queue before the
// start, poll it as told, and buy once admitted. With -healthz D it measures
// GET /healthz answers/s of each -url for D (healthz.go).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crowd:", err)
		os.Exit(1)
	}
}

type answer struct {
	code string
	took time.Duration
}

func run() error {
	base := flag.String("url", "", "the service's base URL (loopback only)")
	activity := flag.Int64("activity", 0, "activity id")
	buyers := flag.Int("buyers", 3000, "buyers in the crowd")
	firstUser := flag.Int64("first-user", 1, "user id of the first buyer")
	timeout := flag.Duration("timeout", 30*time.Second, "per-request timeout")
	var rc roomConfig
	room := flag.Bool("room", false, "waiting-room mode (room.go): -url may list several instances, comma-separated")
	rc.flags()
	healthz := flag.Duration("healthz", 0, "measure GET /healthz answers/s of each -url for this long, one after the other")
	cpuProfile := flag.String("cpuprofile", "", "write the crowd's own CPU profile to this file: what the load costs the box")
	flag.Parse()
	stop, err := profileCPU(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	if *room || *healthz > 0 {
		rc.activity, rc.firstUser, rc.timeout = *activity, *firstUser, *timeout
		urls, err := loopbackURLs(*base)
		if err != nil {
			return err
		}
		rc.urls = urls
		if *healthz > 0 {
			return runHealthz(urls, rc.conns, *healthz)
		}
		return runRoom(rc)
	}
	u, err := url.Parse(*base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q: want http://127.0.0.1:PORT", *base)
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		return fmt.Errorf("-url %q: only loopback targets", *base)
	}
	if *activity < 1 || *buyers < 1 {
		return errors.New("-activity and -buyers must be positive")
	}
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{MaxIdleConnsPerHost: *buyers, MaxConnsPerHost: 0}}
	target := fmt.Sprintf("%s/api/v1/activities/%d/orders", *base, *activity)

	answers := make([]answer, *buyers)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := range *buyers {
		ready.Add(1)
		done.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, target, nil)
			req.Header.Set("X-User-ID", strconv.FormatInt(*firstUser+int64(i), 10))
			ready.Done()
			<-start
			t0 := time.Now()
			answers[i] = answer{code: send(client, req), took: time.Since(t0)}
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	wall := time.Since(t0)

	codes := map[string]int{}
	lat := make([]time.Duration, 0, len(answers))
	final := 0
	for _, a := range answers {
		codes[a.code]++
		lat = append(lat, a.took)
		if a.code == "201" || a.code == "409 sold_out" {
			final++
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"buyers": *buyers, "final_first_answers": final, "final_share": float64(final) / float64(*buyers),
		"codes": codes, "p50_ms": pct(0.50), "p99_ms": pct(0.99), "wall_ms": wall.Milliseconds(),
	})
}

// send makes the purchase and names its answer: the status, and the error
// code for a 4xx or 5xx.
func send(client *http.Client, req *http.Request) string {
	res, err := client.Do(req)
	if err != nil {
		return "transport_error"
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode < 400 {
		return strconv.Itoa(res.StatusCode)
	}
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return strconv.Itoa(res.StatusCode) + " " + e.Error.Code
}

// flags defines the -room mode's flags into rc.
func (rc *roomConfig) flags() {
	flag.IntVar(&rc.users, "users", 20000, "-room: simulated users")
	flag.IntVar(&rc.conns, "conns", 256, "-room, -healthz: connections per instance (-h2c: one per 200 users instead)")
	flag.StringVar(&rc.csv, "csv", "", "-room: write the per-second time series to this CSV file")
	flag.StringVar(&rc.detail, "detail", "", "-room: write one JSON line per user to this file")
	flag.DurationVar(&rc.margin, "join-margin", 3*time.Second, "-room: the joins end this long before starts_at")
	flag.DurationVar(&rc.admissionTTL, "admission-ttl", 60*time.Second, "-room: the service's SECKILL_ADMISSION_TTL")
	flag.DurationVar(&rc.maxWait, "max-wait", 5*time.Minute, "-room: give up on users not final this long after starts_at")
	flag.Float64Var(&rc.noShow, "no-show", 0, "-room: share (0..1) of admitted users who never buy and stop polling")
	flag.DurationVar(&rc.wait, "wait", 30*time.Second, "-room: queue/mine?wait= (whole seconds, 1s-30s) while prequeue or waiting")
	flag.BoolVar(&rc.h2c, "h2c", false, "-room: send the users' requests as HTTP/2 streams without TLS on shared connections (a gateway's upstream)")
	flag.BoolFunc("no-wait", "-room: poll as refresh_s says, without ?wait=", func(string) error { rc.wait = 0; return nil })
}

// profileCPU starts a CPU profile into path ("": none); stop ends and
// writes it.
func profileCPU(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
