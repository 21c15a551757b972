package chaos

import (
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
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

func TestCheckHoldRows(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const held, other = 4, 5
	// activity 4's row held from 1 s to 5 s (fault 3).
	hold := []FaultEvent{
		{At: at(1000), N: 3, Kind: HoldRow, Activity: held},
		{At: at(5000), N: 3, Kind: HoldRow, Activity: held, Heal: true},
	}
	buy := func(id, purchase int, act int64, from, to, status int, code string) Op {
		return Op{ID: id, Kind: "buy", Purchase: purchase, Activity: act, User: act*1_000_000 + int64(purchase),
			Invoke: at(from), Complete: at(to), Status: status, Code: code}
	}
	// Another activity's buyer told 503 twice while the row is held (the
	// group waited for it), sold to once the hold is over: 4.6 s.
	stalled := []Op{
		buy(1, 1, other, 1200, 3300, 503, "unavailable"),
		buy(2, 1, other, 4400, 5500, 503, "unavailable"),
		buy(3, 1, other, 5800, 5810, 201, ""),
	}
	for _, c := range []struct {
		name   string
		ops    []Op
		faults []FaultEvent
		wants  int
		counts int
	}{
		{"another activity's buyer kept waiting past the bound", stalled, hold, 1, 1},
		{"the same told 503 within the bound", stalled[:1], hold, 1, 1},
		{"another activity's buyer told busy, then sold to", []Op{
			buy(1, 1, other, 1200, 2200, 429, "busy"), buy(2, 1, other, 2400, 2410, 201, ""),
		}, hold, 0, 1},
		{"another activity's buyer sold to at once", []Op{buy(1, 1, other, 1200, 1230, 201, "")}, hold, 0, 1},
		{"a buyer of the held activity waits", []Op{
			buy(1, 1, held, 1200, 3300, 503, "unavailable"), buy(2, 1, held, 4400, 5500, 201, ""),
		}, hold, 0, 0},
		{"a purchase begun before the hold", []Op{
			buy(1, 1, other, 900, 3300, 503, "unavailable"), buy(2, 1, other, 4400, 5500, 201, ""),
		}, hold, 0, 0},
		{"another fault overlapped the purchase", stalled, append([]FaultEvent{
			{At: at(4000), N: 4, Kind: "instance-pause"}, {At: at(4500), N: 4, Kind: "instance-pause", Heal: true},
		}, hold...), 0, 0},
		{"a late-commit healed before, whose held COMMITs still land", stalled, append([]FaultEvent{
			{At: at(0), N: 2, Kind: LateCommit, Linger: 4 * time.Second}, {At: at(500), N: 2, Kind: LateCommit, Heal: true, Linger: 4 * time.Second},
		}, hold...), 0, 0},
		{"a late-status-commit held another activity's expiry", stalled, append([]FaultEvent{
			{At: at(2000), N: heldRowN + 1, Kind: heldRow, Activity: 2}, {At: at(24000), N: heldRowN + 1, Kind: heldRow, Activity: 2, Heal: true},
		}, hold...), 1, 1},
		{"a late-status-commit held an expiry of the buyer's activity", stalled, append([]FaultEvent{
			{At: at(2000), N: heldRowN + 1, Kind: heldRow, Activity: other}, {At: at(24000), N: heldRowN + 1, Kind: heldRow, Activity: other, Heal: true},
		}, hold...), 0, 0},
		{"a toxic on the payment link", stalled, append([]FaultEvent{
			{At: at(2000), N: 5, Kind: "latency@payment"}, {At: at(3000), N: 5, Kind: "latency@payment", Heal: true},
		}, hold...), 1, 1},
		{"a Redis pause healed just before, its failover still under way", stalled, append([]FaultEvent{
			{At: at(0), N: 2, Kind: RedisPause, Linger: 3 * time.Second}, {At: at(1190), N: 2, Kind: RedisPause, Heal: true, Linger: 3 * time.Second},
		}, hold...), 0, 0},
		{"a Redis kill healed long before, its replica still copying (campaign 5318)", stalled[:1], append([]FaultEvent{
			{At: at(-9000), N: 2, Kind: RedisKill, Linger: 3 * time.Second}, {At: at(-5000), N: 2, Kind: RedisKill, Heal: true, Linger: 3 * time.Second},
			{At: at(-5000), N: resyncN + 1, Kind: resync}, {At: at(1300), N: resyncN + 1, Kind: resync, Heal: true},
		}, hold...), 0, 0},
		{"a fault healed before the purchase began", stalled, append([]FaultEvent{
			{At: at(0), N: 2, Kind: "latency@db"}, {At: at(1100), N: 2, Kind: "latency@db", Heal: true},
		}, hold...), 1, 1},
	} {
		got, counted := checkHoldRows(c.ops, c.faults, 4*time.Second)
		if len(got) != c.wants || counted != c.counts {
			t.Errorf("%s: %d violations %v, %d purchases counted; want %d, %d", c.name, len(got), got, counted, c.wants, c.counts)
		}
	}
}

func TestScheduleKeepsOtherFaultsWithHoldRows(t *testing.T) {
	links := []string{LinkRedis, LinkDB, LinkUserCheck, LinkPayment}
	for _, seed := range []int64{107, 108, 318, 320} {
		before := schedule(seed, 5*time.Minute, 3, links, nil, true, true, true, nil)
		after := schedule(seed, 5*time.Minute, 3, links, nil, true, true, true, []int64{4, 5})
		var holds, rest []fault
		for _, f := range after {
			if f.kind == HoldRow {
				holds = append(holds, f)
			} else {
				rest = append(rest, f)
			}
		}
		if len(holds) == 0 || len(rest) != len(before) {
			t.Fatalf("seed %d: %d hold-rows, %d other faults with them, %d without", seed, len(holds), len(rest), len(before))
		}
		for i := range rest {
			if rest[i].String() != before[i].String() || rest[i].at != before[i].at {
				t.Fatalf("seed %d: fault %d is %v at %v with hold-rows, %v at %v without", seed, i, rest[i], rest[i].at, before[i], before[i].at)
			}
		}
	}
}

// A Redis primary's kill or pause lingers past its heal by a failover's
// election: the history gives it that, as it gives a late-commit its delay.
func TestRedisFaultsLingerAFailover(t *testing.T) {
	h := NewHistory()
	h.fault(fault{kind: RedisPause, n: 1}, true)
	h.fault(fault{kind: InstancePause, n: 2}, true)
	if got := h.faults[0].Linger; got <= redistopo.NodeTimeout {
		t.Errorf("a Redis pause lingers %v, want past the node timeout %v", got, redistopo.NodeTimeout)
	}
	if got := h.faults[1].Linger; got != 0 {
		t.Errorf("an instance pause lingers %v, want 0", got)
	}
}
