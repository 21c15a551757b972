package testenv

import (
	"testing"
	"time"
)

// waitPoll is how often WaitFor asks again: short against the tests'
// deadlines, long enough not to spin a core.
const waitPoll = 5 * time.Millisecond

// WaitFor asks ok until it holds, and fails the test naming what did not
// happen when within passes first.
func WaitFor(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(waitPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
	}
}
