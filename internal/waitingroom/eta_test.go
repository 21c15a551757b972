package waitingroom

import (
	"testing"
	"time"
)

// No estimate while open admissions hold every unit left: when they are
// used or lapse, nobody knows, and the rate of the admissions before says
// nothing of it (a first waiting user was told 4, 11, 29 and 78 s, and was
// admitted at the 60-s lapse).
// Can fail: without the free <= 0 case, the measured rate gives a number.
func TestNoETAWhileAdmissionsHoldEveryUnit(t *testing.T) {
	held := standing{rank: 0, remain: 3, admitted: 3, rate: 5, pace: 10}
	if d, ok := eta(held); ok {
		t.Errorf("admissions hold all 3 units: eta %v, want none", d)
	}
	free := standing{rank: 0, remain: 5, admitted: 3, rate: 5, pace: 10}
	if d, ok := eta(free); !ok || d != time.Second {
		t.Errorf("2 units free, first in line, pace 10/s: eta %v %v, want 1s", d, ok)
	}
}
