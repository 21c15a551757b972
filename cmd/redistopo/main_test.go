package main

import (
	"io"
	"strings"
	"testing"
)

// Bad invocations are refused with what to write, before any node starts.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"begin"}, {"start"}, {"start", "ring"}} {
		err := run(args, func(string) string { return t.TempDir() }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "cluster") {
			t.Errorf("run %q = %v, want an error naming cluster and sentinel", args, err)
		}
	}
}
