package chaos

import (
	"testing"
	"time"
)

// The room's checker cases: each invariant fails on a history that breaks
// it, and passes on the clean ones beside it.
func TestCheckRoom(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const room, user = 9, 9_000_001
	admitted := func(id, from, to, until int) Op {
		return Op{ID: id, Kind: "queue", Activity: room, User: user, Invoke: at(from), Complete: at(to), Status: 200,
			QueueState: "admitted", AdmittedUntil: at(until)}
	}
	waiting := Op{ID: 1, Kind: "join", Activity: room, User: user, Invoke: at(0), Complete: at(10), Status: 200, QueueState: "waiting"}
	buy := func(id, purchase, from, to, status int, code string) Op {
		return Op{ID: id, Kind: "buy", Purchase: purchase, Activity: room, User: user, Invoke: at(from), Complete: at(to), Status: status, Code: code}
	}
	redisPause := []FaultEvent{
		{At: at(1000), N: 1, Kind: RedisPause, Linger: 3 * time.Second},
		{At: at(1500), N: 1, Kind: RedisPause, Heal: true, Linger: 3 * time.Second},
	}
	paymentToxic := []FaultEvent{{At: at(1000), N: 2, Kind: "latency@payment"}, {At: at(9000), N: 2, Kind: "latency@payment", Heal: true}}
	for _, c := range []struct {
		name      string
		ops       []Op
		faults    []FaultEvent
		soldOut   int // InvAdmittedNotSoldOut
		noAdmit   int // InvRoomAdmission
		counted   int
		otherRoom bool
	}{
		{"admitted, sold to", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 1100, 1200, 201, "")}, nil, 0, 0, 1, false},
		{"admitted, told sold_out", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 1100, 1200, 409, "sold_out")}, nil, 1, 0, 1, false},
		{"admitted, told sold_out beside a payment toxic", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 1100, 1200, 409, "sold_out")}, paymentToxic, 1, 0, 1, false},
		{"admitted, told sold_out while a Redis pause lingers", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 3000, 3100, 409, "sold_out")}, redisPause, 0, 0, 0, false},
		{"told sold_out after the admission's end", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 3900, 4100, 409, "sold_out")}, nil, 0, 0, 0, false},
		{"told sold_out while only waiting", []Op{waiting, buy(3, 1, 100, 200, 409, "sold_out")}, nil, 0, 0, 0, false},
		{"sold to without joining", []Op{buy(3, 1, 100, 200, 201, "")}, nil, 0, 1, 0, false},
		{"sold to while waiting", []Op{waiting, buy(3, 1, 100, 200, 201, "")}, nil, 0, 1, 0, false},
		{"sold to long after the admission lapsed", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 7000, 7100, 201, "")}, nil, 0, 1, 0, false},
		{"refused after the admission lapsed", []Op{waiting, admitted(2, 1000, 1010, 4000), buy(3, 1, 7000, 7100, 403, "not_admitted")}, nil, 0, 0, 0, false},
		{"sold to on a retry of a purchase begun inside the admission", []Op{waiting, admitted(2, 1000, 1010, 4000),
			buy(3, 1, 3500, 4500, 503, "unavailable"), buy(4, 1, 5200, 5300, 201, "")}, nil, 0, 0, 0, false},
		{"another activity's buyer sold to without a room", []Op{buy(3, 1, 100, 200, 201, "")}, nil, 0, 0, 0, true},
	} {
		r := int64(room)
		if c.otherRoom {
			r = 10
		}
		got, counted := checkRoom(c.ops, c.faults, r)
		n := map[string]int{}
		for _, v := range got {
			n[v.inv]++
		}
		if n[InvAdmittedNotSoldOut] != c.soldOut || n[InvRoomAdmission] != c.noAdmit || counted != c.counted {
			t.Errorf("%s: %v, %d requests counted; want %d %q, %d %q, %d counted", c.name, got, counted,
				c.soldOut, InvAdmittedNotSoldOut, c.noAdmit, InvRoomAdmission, c.counted)
		}
	}
}
