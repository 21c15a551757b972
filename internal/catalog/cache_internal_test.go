package catalog

import (
	"testing"
	"time"
)

// Ids above the highest are unknown for a second; a gap below it for a
// minute; the gaps remembered stay within their bound.
func TestActivityCacheKnowsUnknownIDs(t *testing.T) {
	c := newActivityCache()
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	if c.knownUnknown(11, t0) {
		t.Fatal("an id is unknown before any miss")
	}
	c.markUnknown(5, 10, t0) // 5 is a gap below the highest, 10
	for _, k := range []struct {
		id   int64
		at   time.Duration
		want bool
	}{
		{11, 0, true}, {1_000_000, 900 * time.Millisecond, true}, {11, time.Second, false},
		{5, 30 * time.Second, true}, {5, time.Minute, false},
		{7, 0, false}, // below the highest and never missed: asked
	} {
		if got := c.knownUnknown(k.id, t0.Add(k.at)); got != k.want {
			t.Errorf("knownUnknown(%d) %v after the miss = %v, want %v", k.id, k.at, got, k.want)
		}
	}
	for id := int64(0); id < 2*maxGaps; id++ {
		c.markUnknown(id, 3*maxGaps, t0)
	}
	if n := c.gaps.Len(); n > maxGaps {
		t.Errorf("%d gaps remembered, want at most %d", n, maxGaps)
	}
}
