package lock_test

import (
	"slices"
	"sync"
	"time"
)

// cleanups is an Observer that records cleanup and release results.
type cleanups struct {
	mu       sync.Mutex
	cleaned  []string
	releases []string
}

func (o *cleanups) Obtained(string, time.Duration) {}

func (o *cleanups) UnknownOutcome(string) {}

func (o *cleanups) LeaseLost() {}

func (o *cleanups) Released(result string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.releases = append(o.releases, result)
}

func (o *cleanups) CleanedUp(result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cleaned = append(o.cleaned, result)
}

func (o *cleanups) results() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.cleaned)
}

func (o *cleanups) released() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.releases)
}
