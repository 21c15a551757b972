package purchase

import (
	"testing"
	"time"
)

// A look-up that saw the stock at zero must not mark the activity sold out
// when a unit went back (ClearSoldOut, from an expiry) after the look-up
// began: that mark would answer sold_out for a unit the activity has, for up
// to a second. Without the epoch, the clear is overwritten.
func TestClearDuringALookupWinsOverItsMark(t *testing.T) {
	var m soldOutMarks
	epoch := m.epoch(1) // a deduct begins, and will see 0 left
	m.clear(1)          // meanwhile an expiry returns a unit
	m.mark(1, time.Now(), epoch)
	if _, marked := m.seen(1); marked {
		t.Fatal("the activity is marked sold out after a unit went back during the look-up")
	}
	m.mark(1, time.Now(), m.epoch(1)) // a look-up begun after the clear
	if _, marked := m.seen(1); !marked {
		t.Fatal("a look-up begun after the clear did not mark the activity")
	}
}
