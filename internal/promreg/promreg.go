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
