// Package promreg registers Prometheus collectors the way every package of
// the service needs it: two instances on one registry (two servers in a
// test, a sibling client) share one collector instead of failing.
package promreg

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or returns the collector of
// the same type already registered under its name. Any other failure is
// returned with c, which then counts unregistered; callers decide whether
// that stops them (metrics must not take the service down).
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("register metrics: %w", err)
}

// Registrar registers a package's collectors with one failure policy: each
// is registered (or shared, as Register does), and the first failure is kept
// for Err; the caller decides whether it stops them. A nil registry
// registers nothing: the collectors count unregistered.
type Registrar struct {
	reg prometheus.Registerer
	err error
}

// NewRegistrar returns a Registrar on reg (nil: register nothing).
func NewRegistrar(reg prometheus.Registerer) *Registrar { return &Registrar{reg: reg} }

// Add registers *c and replaces it with the collector registered under its
// name, which may be another instance's.
func Add[C prometheus.Collector](r *Registrar, c *C) {
	if r.reg == nil {
		return
	}
	got, err := Register(r.reg, *c)
	*c = got
	if err != nil && r.err == nil {
		r.err = err
	}
}

// Err is the first registration's failure, or nil.
func (r *Registrar) Err() error { return r.err }
