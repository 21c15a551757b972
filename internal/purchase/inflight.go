package purchase

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/seckill-oss/seckill"
)

// inflights holds each buyer's purchase in flight in this process, so one
// user id holds at most one queue slot per activity however many requests
// it sends at once. The others wait for that purchase and are
// answered as a repeat after it would be: the order again for the same
// idempotency key, already_purchased with its id, or the same final
// refusal. The answer of a contract test's "100 concurrent purchases by one
// user" is unchanged (one 201, the rest 409 already_purchased); only the
// queue no longer holds 100 tickets for it.
type inflights struct {
	mu      sync.Mutex
	flights map[buyer]*flight
	waiting atomic.Int64 // requests waiting for another's flight, for tests
}

// flight is one purchase in flight and, once done is closed, its outcome.
type flight struct {
	req seckill.BuyRequest
	// done is made, under the inflights' mu, by the first request that
	// waits for the flight: most flights have none, and cost no channel.
	done chan struct{}
	// Set before done is closed, read after.
	order seckill.Order
	err   error
	own   bool // the outcome was the leader's own: its request ended
	// ticket is the leader's place in the queue, allocated with the flight.
	ticket ticket
}

// join returns the buyer's flight, and whether the caller leads it: a
// leader runs the purchase and must leave; any other caller waits for the
// channel join returns (nil for the leader) and then calls waited.
func (fs *inflights) join(b buyer, req seckill.BuyRequest) (f *flight, done <-chan struct{}, leader bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.flights[b]; f != nil {
		fs.waiting.Add(1)
		if f.done == nil {
			f.done = make(chan struct{})
		}
		return f, f.done, false
	}
	if fs.flights == nil {
		fs.flights = make(map[buyer]*flight)
	}
	f = &flight{req: req}
	fs.flights[b] = f
	return f, nil, true
}

// leave ends the leader's flight with its outcome; own says the outcome
// came from the leader's request ending, which says nothing to the others.
func (fs *inflights) leave(f *flight, o seckill.Order, err error, own bool) {
	fs.mu.Lock()
	delete(fs.flights, buyer{f.req.ActivityID, f.req.UserID})
	done := f.done // no request joins the flight once it is out of the map
	fs.mu.Unlock()
	f.order, f.err, f.own = o, err, own && err != nil
	if done != nil {
		close(done)
	}
}

// waited counts a waiter out.
func (fs *inflights) waited() { fs.waiting.Add(-1) }

// answerFor returns the answer the flight's outcome gives req, a request of
// the same buyer that waited for it; ok is false when req must go on by
// itself (and will meet the buyer's order, if there is one, in the bought
// memory or the queue).
func (f *flight) answerFor(req seckill.BuyRequest) (o seckill.Order, err error, ok bool) {
	if f.own {
		return seckill.Order{}, nil, false
	}
	if f.err == nil {
		o, err := req.AnswerHolder(f.order)
		return o, err, true
	}
	var e *seckill.Error
	if !errors.As(f.err, &e) {
		return seckill.Order{}, nil, false
	}
	switch e.Code {
	case seckill.ESoldOut, seckill.EEnded, seckill.ENotStarted, seckill.EUserRejected, seckill.EPaused,
		seckill.EBusy, seckill.EUnavailable, seckill.EOutcomeUnknown:
		// The same refusal a repeat would meet now; for busy and
		// unavailable, the waiter has waited as long as the leader did.
		return seckill.Order{}, f.err, true
	}
	// already_purchased (the order's key may be this request's) and a key
	// used elsewhere: the repeat's own look-ups answer it.
	return seckill.Order{}, nil, false
}
