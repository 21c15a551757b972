package seckill_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// loadtest/guards.sh takes each guard away by replacing one literal piece of
// code; a refactor that moves the piece leaves the script stale, and only a
// run of its campaigns (minutes each) would say so. Each piece must occur
// exactly once where the script looks for it.
func TestGuardsStillApply(t *testing.T) {
	src, err := os.ReadFile("loadtest/guards.sh")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`(?m)^\s*(?:mutate_\w+\(\) \{ )?replace (\S+) ('[^']*'|"[^"]*")`).FindAllStringSubmatch(string(src), -1)
	if len(calls) < 8 {
		t.Fatalf("found %d replacements in loadtest/guards.sh; the pattern no longer reads it", len(calls))
	}
	for _, c := range calls {
		file, from := c[1], c[2][1:len(c[2])-1]
		body, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("guards.sh replaces in %s: %v", file, err)
			continue
		}
		if n := strings.Count(string(body), from); n != 1 {
			t.Errorf("guards.sh replaces %q in %s, found %d times, want once: update the guard's mutation", from, file, n)
		}
	}
}
