package chaos

import (
	"testing"
	"time"
)

// TestFenceWatch: a fence read below one read before is reported once, with
// the highest read before it; moving forward or staying is not.
func TestFenceWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	fw := newFenceWatch(nil)
	for i, f := range []int64{5, 7, 7, 6, 9, 4} {
		fw.account(1, fenceRead{f, t0.Add(time.Duration(i) * time.Second)})
		fw.account(2, fenceRead{int64(i), t0.Add(time.Duration(i) * time.Second)})
	}
	got := fw.wentBack()
	if len(got) != 1 || got[0].activity != 1 || got[0].from.fence != 7 || got[0].to.fence != 6 || !got[0].to.at.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("wentBack = %+v; want activity 1 only, from 7 to 6 at the fourth read", got)
	}
}
