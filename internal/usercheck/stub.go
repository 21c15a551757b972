package usercheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill-oss/seckill/internal/stubhttp"
)

// StubConfig is the behaviour of a Stub. As JSON (GET/PUT /stub/config) the
// fields are snake_case and durations are Go duration strings ("300ms").
type StubConfig struct {
	// Latency of every answer that is not slow.
	Latency time.Duration
	// SlowRate is the fraction of answers that take SlowLatency instead of
	// Latency: set SlowLatency above the lock TTL for calls that outlive the
	// lease.
	SlowRate    float64
	SlowLatency time.Duration
	// RejectRate is the fraction of answers that are {"eligible": false}.
	RejectRate float64
	// FailRate is the fraction of answers that are 500 Internal Server Error.
	FailRate float64
	// RejectUsers, SlowUsers and FailUsers get that behaviour every time,
	// whatever the rates: deterministic cases for tests.
	RejectUsers []int64
	SlowUsers   []int64
	FailUsers   []int64
	// Seed seeds the Stub's random numbers, so a run can be replayed. In
	// NewStub, 0 picks a random seed; in SetConfig and PUT, 0 keeps the
	// current generator and any other value restarts it from that seed.
	Seed uint64
}

// stubConfigJSON is StubConfig's wire form.
type stubConfigJSON struct {
	Latency     string  `json:"latency"`
	SlowRate    float64 `json:"slow_rate"`
	SlowLatency string  `json:"slow_latency"`
	RejectRate  float64 `json:"reject_rate"`
	FailRate    float64 `json:"fail_rate"`
	RejectUsers []int64 `json:"reject_users"`
	SlowUsers   []int64 `json:"slow_users"`
	FailUsers   []int64 `json:"fail_users"`
	Seed        uint64  `json:"seed"`
}

// MarshalJSON writes durations as Go duration strings.
func (c StubConfig) MarshalJSON() ([]byte, error) { return json.Marshal(c.wire()) }

// wire is c in its JSON form.
func (c StubConfig) wire() stubConfigJSON {
	return stubConfigJSON{
		Latency: c.Latency.String(), SlowRate: c.SlowRate, SlowLatency: c.SlowLatency.String(),
		RejectRate: c.RejectRate, FailRate: c.FailRate,
		RejectUsers: c.RejectUsers, SlowUsers: c.SlowUsers, FailUsers: c.FailUsers, Seed: c.Seed,
	}
}

// UnmarshalJSON reads durations as Go duration strings and refuses unknown
// fields. Fields absent from the JSON keep their current values, so a PUT may
// change one field alone.
func (c *StubConfig) UnmarshalJSON(data []byte) error {
	w := c.wire()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field must not be ignored silently
	if err := dec.Decode(&w); err != nil {
		return err
	}
	latency, err := time.ParseDuration(w.Latency)
	if err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	slow, err := time.ParseDuration(w.SlowLatency)
	if err != nil {
		return fmt.Errorf("slow_latency: %w", err)
	}
	*c = StubConfig{
		Latency: latency, SlowRate: w.SlowRate, SlowLatency: slow,
		RejectRate: w.RejectRate, FailRate: w.FailRate,
		RejectUsers: w.RejectUsers, SlowUsers: w.SlowUsers, FailUsers: w.FailUsers, Seed: w.Seed,
	}
	return nil
}

// Validate reports a negative duration or a rate outside [0, 1].
func (c StubConfig) Validate() error {
	if c.Latency < 0 || c.SlowLatency < 0 {
		return errors.New("usercheck: stub latencies must not be negative")
	}
	for _, r := range []float64{c.SlowRate, c.RejectRate, c.FailRate} {
		if !(r >= 0 && r <= 1) { // also catches NaN
			return errors.New("usercheck: stub rates must be in [0, 1]")
		}
	}
	return nil
}

// Stub is an http.Handler that plays the user-verification service of
// docs/API.md, for local runs, docker-compose and load tests:
//
//	GET /v1/users/{user_id}/eligibility?activity_id={id}   the verification
//	GET /stub/config, PUT /stub/config                     its behaviour (StubConfig as JSON)
//	GET /healthz
//
// Behaviour can change at run time, so a load test can take verification
// down in the middle of a sale and bring it back. A slow answer stops waiting
// when its client goes away. A Stub is safe for concurrent use.
type Stub struct {
	mux      *http.ServeMux
	requests atomic.Int64

	mu     sync.Mutex // guards the fields below
	cfg    StubConfig
	reject map[int64]bool
	slow   map[int64]bool
	fail   map[int64]bool
	rnd    *rand.Rand
}

// NewStub returns a Stub that behaves as cfg says, or cfg.Validate's error.
func NewStub(cfg StubConfig) (*Stub, error) {
	s := &Stub{mux: http.NewServeMux()}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	if err := s.SetConfig(cfg); err != nil {
		return nil, err
	}
	s.mux.HandleFunc("GET /v1/users/{user_id}/eligibility", s.handleEligibility)
	stubhttp.Handle(s.mux, s.handleGetConfig, s.handlePutConfig)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Config returns the current behaviour.
func (s *Stub) Config() StubConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// SetConfig replaces the behaviour, for answers that start from now on. A
// zero Seed keeps the current random sequence.
func (s *Stub) SetConfig(cfg StubConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.Seed == 0 {
		cfg.Seed = s.cfg.Seed
	} else {
		s.rnd = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed))
	}
	s.cfg = cfg
	s.reject, s.slow, s.fail = idSet(cfg.RejectUsers), idSet(cfg.SlowUsers), idSet(cfg.FailUsers)
	return nil
}

// Requests reports how many verification requests the Stub has received.
func (s *Stub) Requests() int64 { return s.requests.Load() }

func idSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// stubAnswer is what the Stub decided for one request.
type stubAnswer struct {
	delay        time.Duration
	fail, reject bool
}

func (s *Stub) decide(userID int64) stubAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Three draws every time, so one request's outcome never shifts the
	// random sequence of the next.
	slowDraw, failDraw, rejectDraw := s.rnd.Float64(), s.rnd.Float64(), s.rnd.Float64()
	a := stubAnswer{delay: s.cfg.Latency}
	if s.slow[userID] || slowDraw < s.cfg.SlowRate {
		a.delay = s.cfg.SlowLatency
	}
	a.fail = s.fail[userID] || failDraw < s.cfg.FailRate
	a.reject = s.reject[userID] || rejectDraw < s.cfg.RejectRate
	return a
}

func (s *Stub) handleEligibility(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	userID, err := strconv.ParseInt(r.PathValue("user_id"), 10, 64)
	if err != nil || userID <= 0 {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "user_id must be a positive integer")
		return
	}
	activityID, err := strconv.ParseInt(r.URL.Query().Get("activity_id"), 10, 64)
	if err != nil || activityID <= 0 {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "activity_id must be a positive integer")
		return
	}
	a := s.decide(userID)
	if a.delay > 0 {
		t := time.NewTimer(a.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return // nobody is listening any more
		}
	}
	switch {
	case a.fail:
		stubhttp.WriteError(w, http.StatusInternalServerError, "internal", "stub: configured failure")
	case a.reject:
		stubhttp.WriteJSON(w, http.StatusOK, map[string]any{"eligible": false, "reason": "stub: configured rejection"})
	default:
		stubhttp.WriteJSON(w, http.StatusOK, map[string]any{"eligible": true})
	}
}

func (s *Stub) handleGetConfig(w http.ResponseWriter, _ *http.Request) {
	stubhttp.WriteJSON(w, http.StatusOK, s.Config())
}

func (s *Stub) handlePutConfig(w http.ResponseWriter, r *http.Request) {
	cfg := s.Config()
	cfg.Seed = 0 // only a seed in the body restarts the sequence
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	if err := dec.Decode(&cfg); err != nil { // StubConfig refuses unknown fields itself
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", "bad config: "+err.Error())
		return
	}
	if err := s.SetConfig(cfg); err != nil {
		stubhttp.WriteError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	stubhttp.WriteJSON(w, http.StatusOK, s.Config())
}

// writeStubError answers in the error shape of docs/API.md.
