package httpapi

import (
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// The admin failure limit (docs/API.md "Admin failures"), so the admin token
// cannot be guessed fast: after AdminFailureLimit failed authentications
// (a wrong or missing token) from one client address within
// AdminFailureWindow, every admin request from that address is answered 429
// too_many_requests, whatever its token, until AdminFailureWindow has passed
// since its last failure. A wrong token sent while limited is a failure too,
// so an address that keeps guessing stays limited. No answer is delayed: a
// guess is refused at once, not slowed down.
//
// At most AdminFailureAddresses addresses are remembered, the least recently
// seen forgotten first: about 200 bytes each (ten failure times, the limit's
// end and the list's entry), 2 MB at most. Only failures create an entry.
// An address forgotten while limited starts afresh: evicting it takes more
// than AdminFailureAddresses other failing addresses within its quiet time,
// and an address that keeps guessing stays the most recently seen.
const (
	AdminFailureLimit     = 10
	AdminFailureWindow    = time.Minute
	AdminFailureAddresses = 10_000
)

// adminFailures counts failed admin authentications per client address
// (addressKey: an IPv6 address by its /64).
type adminFailures struct {
	mu    sync.Mutex
	addrs *simplelru.LRU[string, *failureRecord]
	now   func() time.Time
	log   *slog.Logger
}

// failureRecord is one address's last AdminFailureLimit failures, in unix
// nanoseconds, as a ring whose next slot holds the oldest.
type failureRecord struct {
	times        [AdminFailureLimit]int64
	next         int
	count        int
	limitedUntil int64 // unix nanoseconds; 0: never limited
}

func newAdminFailures(now func() time.Time, log *slog.Logger) *adminFailures {
	addrs, _ := simplelru.NewLRU[string, *failureRecord](AdminFailureAddresses, nil) // fails only for a size below 1
	return &adminFailures{addrs: addrs, now: now, log: log}
}

// check records the outcome of one admin authentication from addr and says
// whether the address is limited: then the request is refused whatever its
// token, for retryAfter.
func (f *adminFailures) check(addr string, authenticated bool) (retryAfter time.Duration, limited bool) {
	now := f.now().UnixNano()
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, known := f.addrs.Get(addr)
	if known && now < rec.limitedUntil {
		if !authenticated {
			rec.fail(now)
			rec.limitedUntil = now + int64(AdminFailureWindow) // a window after its last failure
		}
		return time.Duration(rec.limitedUntil - now), true
	}
	if authenticated {
		return 0, false
	}
	if !known {
		rec = &failureRecord{}
		f.addrs.Add(addr, rec)
	}
	if rec.fail(now) {
		f.log.Warn("admin API: too many failed authentications from one address; its admin requests are refused for a minute",
			"client_address", addr, "failures", AdminFailureLimit, "window", AdminFailureWindow)
	}
	return 0, false
}

// fail records a failure at now and reports whether it starts a limit: the
// last AdminFailureLimit failures all fell within AdminFailureWindow.
func (r *failureRecord) fail(now int64) (started bool) {
	r.times[r.next] = now
	r.next = (r.next + 1) % AdminFailureLimit
	r.count = min(r.count+1, AdminFailureLimit)
	oldest := r.times[r.next]
	if r.count < AdminFailureLimit || now-oldest >= int64(AdminFailureWindow) {
		return false
	}
	r.limitedUntil = now + int64(AdminFailureWindow)
	return true
}
