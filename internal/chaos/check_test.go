package chaos

import (
	"testing"
	"time"
)

func TestCheckMadeIn(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	buy := func(id int, from, to int, status int, code string, unknown bool) Op {
		return Op{ID: id, Kind: "buy", Activity: 1, User: 7, Invoke: at(from), Complete: at(to), Status: status, Code: code, Unknown: unknown}
	}
	row := func(ms int) finalState {
		return finalState{orders: []orderRow{{ID: "o1", Activity: 1, User: 7, Status: "created", Created: at(ms)}}}
	}
	for _, c := range []struct {
		name  string
		ops   []Op
		made  int
		wants int
	}{
		{"made during a 503 that said nothing was sold", []Op{buy(1, 0, 2000, 503, "unavailable", false), buy(2, 2500, 2600, 409, "already_purchased", false)}, 500, 1},
		{"made during a 201", []Op{buy(1, 0, 100, 201, "", false)}, 50, 0},
		{"made during an outcome_unknown", []Op{buy(1, 0, 2000, 503, "outcome_unknown", false)}, 500, 0},
		{"after an unknown completion, during a 503", []Op{buy(1, 0, 1000, 0, "", true), buy(2, 1500, 2000, 503, "unavailable", false)}, 1700, 0},
		{"made between two requests", []Op{buy(1, 0, 100, 503, "unavailable", false), buy(2, 200, 300, 201, "", false)}, 150, 0},
		{"made during a retry's 201 after a true 503", []Op{buy(1, 0, 100, 503, "unavailable", false), buy(2, 200, 300, 201, "", false)}, 250, 0},
	} {
		if got := checkMadeIn(c.ops, row(c.made)); len(got) != c.wants {
			t.Errorf("%s: %d violations %v, want %d", c.name, len(got), got, c.wants)
		}
	}
}
