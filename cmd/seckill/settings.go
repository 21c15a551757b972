package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/purchase"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// The numeric settings, one table: each variable's name, default and
// bounds, and where it goes. loadConfig reads them through it, and
// TestSettingsTableIsTheREADMEs holds README.md's defaults to it. The
// rules between settings (a call shorter than the lease) are the purchase
// path's own (purchase.Config.Check).
var (
	durationSettings = []struct {
		name     string
		def, min time.Duration
		to       func(*config) *time.Duration
	}{
		{"SECKILL_LOCK_TTL", 2 * time.Second, 10 * time.Millisecond, func(c *config) *time.Duration { return &c.LockTTL }},
		{"SECKILL_USERCHECK_TIMEOUT", 500 * time.Millisecond, time.Millisecond, func(c *config) *time.Duration { return &c.UserCheckTimeout }},
		{"SECKILL_LOCK_WAIT", purchase.DefaultLockWait, time.Millisecond, func(c *config) *time.Duration { return &c.LockWait }},
		{"SECKILL_SHUTDOWN_TIMEOUT", 15 * time.Second, 0, func(c *config) *time.Duration { return &c.ShutdownTimeout }},
		{"SECKILL_BOOKS_SWEEP", 5 * time.Second, 0, func(c *config) *time.Duration { return &c.BooksSweep }},
		{"SECKILL_ADMISSION_TTL", waitingroom.DefaultAdmissionTTL, time.Second, func(c *config) *time.Duration { return &c.AdmissionTTL }},
		{"SECKILL_ADMISSION_IDLE", 0, 0, func(c *config) *time.Duration { return &c.AdmissionIdle }},
		{"SECKILL_REDIS_WAIT_TIMEOUT", 100 * time.Millisecond, time.Millisecond, func(c *config) *time.Duration { return &c.WaitTimeout }},
		{"SECKILL_PAYMENT_WINDOW", 15 * time.Minute, time.Second, func(c *config) *time.Duration { return &c.PaymentWindow }},
		{"SECKILL_EVENTS_RETENTION", 24 * time.Hour, time.Minute, func(c *config) *time.Duration { return &c.EventsRetention }},
	}
	countSettings = []struct {
		name        string
		def, lo, hi int
		what        string // what it counts, for the error
		to          func(*config) *int
	}{
		{"SECKILL_QUEUE_MAX", purchase.DefaultQueueMax, 1, maxQueueMax, "buyers", func(c *config) *int { return &c.QueueMax }},
		{"SECKILL_QUEUE_MAX_TOTAL", purchase.DefaultQueueMaxTotal, 1, maxQueueMax, "buyers", func(c *config) *int { return &c.QueueMaxTotal }},
		{"SECKILL_MYSQL_MAX_CONNS", order.DefaultMaxConns, 1, order.MaxPoolConns, "connections", func(c *config) *int { return &c.MySQLMaxConns }},
		{"SECKILL_REDIS_WAIT_REPLICAS", 0, 0, maxWaitReplicas, "replicas (0: no WAIT)", func(c *config) *int { return &c.WaitReplicas }},
		{"SECKILL_ROOM_MAX_PLACES", waitingroom.DefaultMaxPlaces, 1, maxRoomPlaces, "places", func(c *config) *int { return &c.RoomMaxPlaces }},
		{"SECKILL_ROOM_MAX_HELD", waitingroom.DefaultMaxHeld, 0, maxRoomHeld, "held requests (0: none held)", func(c *config) *int { return &c.RoomMaxHeld }},
		{"SECKILL_EVENTS_STREAM_MAXLEN", 1000000, 1000, 1 << 30, "stream entries", func(c *config) *int { return &c.EventsStreamMaxLen }},
	}
	// Rates are per second, at most 1e9.
	rateSettings = []struct {
		name     string
		def, min float64
		what     string // what it must be, for the error
		to       func(*config) *float64
	}{
		{"SECKILL_RATE_GLOBAL", 0, 0, noLimit, func(c *config) *float64 { return &c.RateGlobal }},
		{"SECKILL_RATE_PER_USER", defaultRatePerUser, 0, noLimit, func(c *config) *float64 { return &c.RatePerUser }},
		{"SECKILL_RATE_PER_USER_READS", defaultRatePerUserReads, 0, noLimit, func(c *config) *float64 { return &c.RatePerUserReads }},
		{"SECKILL_RATE_JOINS_PER_ADDRESS", 0, 0, noLimit, func(c *config) *float64 { return &c.RateJoinsPerAddress }},
		{"SECKILL_ADMISSION_RATE", waitingroom.DefaultMaxRate, 1, "admissions a second, from 1 to 1e9", func(c *config) *float64 { return &c.AdmissionRate }},
	}
)

// readSettings reads every setting of the table into c.
func (c *config) readSettings(e *envReader) {
	for _, s := range durationSettings {
		*s.to(c) = e.duration(s.name, s.def, s.min)
	}
	for _, s := range countSettings {
		*s.to(c) = e.count(s.name, s.def, s.lo, s.hi, fmt.Sprintf("a whole number of %s from %d to %d", s.what, s.lo, s.hi))
	}
	for _, s := range rateSettings {
		*s.to(c) = e.rate(s.name, s.def, s.min, s.what)
	}
}

// duration reads a Go duration of at least min.
func (e *envReader) duration(name string, def, min time.Duration) time.Duration {
	v := envOr(e.get, name, def.String())
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		e.fail(fmt.Errorf("%s=%q: not a duration such as 500ms or 2s", name, v))
	case d < min:
		e.fail(fmt.Errorf("%s=%q: must be at least %v", name, v, min))
	}
	return d
}

// maxRoomPlaces bounds SECKILL_ROOM_MAX_PLACES: a billion places would be
// about 100 GB of Redis.
const maxRoomPlaces = 100_000_000

// maxRoomHeld bounds SECKILL_ROOM_MAX_HELD: each held request keeps a
// connection and a goroutine, some 10-20 KB; ten million would be 200 GB.
const maxRoomHeld = 10_000_000

// noLimit is what a request rate must be.
const noLimit = "requests per second, 0 for no limit"

// rate reads a number a second from min to 1e9; what says in the error
// what it must be.
func (e *envReader) rate(name string, def, min float64, what string) float64 {
	v := envOr(e.get, name, strconv.FormatFloat(def, 'f', -1, 64))
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || r < min || math.IsNaN(r) || r > 1e9 {
		e.fail(fmt.Errorf("%s=%q: must be %s", name, v, what))
	}
	return r
}

// count reads a whole number in lo..hi; what says in the error what it
// counts ("a whole number of buyers from 1 to 10000").
func (e *envReader) count(name string, def, lo, hi int, what string) int {
	v := envOr(e.get, name, strconv.Itoa(def))
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		e.fail(fmt.Errorf("%s=%q: must be %s", name, v, what))
		return 0
	}
	return n
}
