package seckill

import "fmt"

// Route is a buyer request whose refusals the contract orders (docs/API.md
// "Precedence of refusals").
type Route uint8

// The routes Precedence orders.
const (
	RouteBuy  Route = 1 << iota // POST .../orders
	RouteJoin                   // POST .../queue
	RouteMine                   // GET .../queue/mine
)

// Check is one named check of the contract's precedence and the routes
// that make it. A name that is an error code is the refusal the check
// answers; the others name what they look at.
type Check struct {
	Name   string
	Routes Route
}

// Precedence is docs/API.md "Precedence of refusals" past the steps every
// route takes first (identity, rate limits, the request, the activity, a
// purchase's quantity), in the contract's order: each route makes the
// checks listed for it, in this order, and the first that answers wins. A
// purchase lists the doc's numbered steps; a join and queue/mine the
// differences the doc names after them. Adding a refusal is a line here and
// its check in each route that makes it (Checks refuses to start without).
var Precedence = []Check{
	{"room_lost", RouteJoin | RouteMine},        // Redis lost a room the database has: 503, first after the activity
	{"not_in_queue", RouteMine},                 // no place to report
	{"place", RouteJoin},                        // a place (a lapsed one aside) answers its status, but for paused
	{"no_waiting_room", RouteJoin},              // joining an activity without a room
	{"not_open", RouteJoin},                     // before the room's opens_at
	{"not_started", RouteBuy},                   // before starts_at
	{"ended_before_holder", RouteJoin},          // a join after ends_at: ended, even to a holder
	{"already_purchased", RouteBuy | RouteJoin}, // the caller holds an order, whatever holds below
	{"ended", RouteBuy},                         // at or after ends_at, or ended by ops
	{"paused", RouteBuy | RouteJoin},            // ops paused the sale
	{"idempotency_key", RouteBuy},               // a repeat of a key gets its order again
	{"room_closed", RouteJoin},                  // the room closed: sold out for good, or ended
	{"not_admitted", RouteBuy},                  // the waiting room: no open admission, or the room lost
	{"user_rejected", RouteBuy | RouteJoin},     // the user check refused the user
	{"sold_out", RouteBuy},                      // seen sold out a moment ago (an activity without a room)
}

// Named is a route's check with its name.
type Named[F any] struct {
	Name  string
	Check F
}

// Checks returns the route's checks, from fns by name, in Precedence's
// order. It panics when fns lacks a check Precedence lists for the route or
// has one it does not: the routes build their lists once, at start-up, so a
// line added to Precedence cannot be forgotten by a route that makes it.
func Checks[F any](route Route, fns map[string]F) []Named[F] {
	var out []Named[F]
	for _, c := range Precedence {
		if c.Routes&route == 0 {
			continue
		}
		fn, ok := fns[c.Name]
		if !ok {
			panic(fmt.Sprintf("seckill: route %d has no check %q", route, c.Name))
		}
		out = append(out, Named[F]{Name: c.Name, Check: fn})
	}
	if len(out) != len(fns) {
		panic(fmt.Sprintf("seckill: route %d has %d checks, Precedence lists %d for it", route, len(fns), len(out)))
	}
	return out
}
