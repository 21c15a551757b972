package chaos

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
)

// Op is one client operation of the campaign: its invocation and its
// completion. An operation whose answer never came (a timeout, a cut
// connection) completes as Unknown: it may or may not have taken effect.
type Op struct {
	ID       int
	Client   int
	Kind     string // buy, poll, callback, pay, preload, audit, reconcile, join, queue
	Instance int    // which service instance it was sent to (-1: none)
	Activity int64
	User     int64
	Key      string // Idempotency-Key, if any
	Order    string // order id sent (callback, pay) or answered
	Invoke   time.Time
	Complete time.Time

	Status      int    // HTTP status; 0 when Unknown
	Code        string // error code of a non-2xx answer
	OrderStatus string // order status in the answer, if any
	Unknown     bool
	Err         string // transport error of an Unknown completion
	Detail      string // anything else worth showing (audit numbers, payment set)
	// Quantity is the units a buy asked for: 0 when the body named none
	// (one unit).
	Quantity int
	// QueueState and AdmittedUntil are a join's or a queue/mine read's
	// answer (docs/API.md "Waiting room"): the caller's state, and until
	// when an admitted caller may buy.
	QueueState    string
	AdmittedUntil time.Time
	// Purchase numbers the buyer's purchase (workload.purchase: a request
	// and its retries, and the result-page looks between them) the
	// operation belongs to; 0 for an operation of no purchase.
	Purchase int
}

// Answer is how the operation completed, for people.
func (o Op) Answer() string {
	switch {
	case o.Unknown:
		return "unknown (" + o.Err + ")"
	case o.Code != "":
		return fmt.Sprintf("%d %s", o.Status, o.Code)
	default:
		return fmt.Sprintf("%d", o.Status)
	}
}

func (o Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d c%d %s", o.ID, o.Client, o.Kind)
	if o.Instance >= 0 {
		fmt.Fprintf(&b, "@i%d", o.Instance)
	}
	if o.Activity != 0 {
		fmt.Fprintf(&b, " act=%d", o.Activity)
	}
	if o.User != 0 {
		fmt.Fprintf(&b, " user=%d", o.User)
	}
	if o.Key != "" {
		fmt.Fprintf(&b, " key=%s", o.Key)
	}
	if o.Quantity != 0 {
		fmt.Fprintf(&b, " quantity=%d", o.Quantity)
	}
	if o.Order != "" {
		fmt.Fprintf(&b, " order=%s", o.Order)
	}
	fmt.Fprintf(&b, " -> %s", o.Answer())
	if o.OrderStatus != "" {
		fmt.Fprintf(&b, " status=%s", o.OrderStatus)
	}
	if o.QueueState != "" {
		fmt.Fprintf(&b, " state=%s", o.QueueState)
	}
	if !o.AdmittedUntil.IsZero() {
		fmt.Fprintf(&b, " admitted_until=%s", o.AdmittedUntil.Format("15:04:05.000"))
	}
	if o.Detail != "" {
		fmt.Fprintf(&b, " %s", o.Detail)
	}
	return b.String()
}

// FaultEvent is a fault's start or its heal.
type FaultEvent struct {
	At    time.Time
	Fault string // e.g. "instance-kill i1", "latency@redis 300ms"
	Heal  bool
	// N is the fault's index in the schedule: a start and its heal share it.
	N    int
	Kind string // as counted (fault.Kind)
	// Activity is the activity whose row a hold-row holds.
	Activity int64
	// Linger is how long after its heal the fault may still act: a
	// late-commit's or late-deduct's held commands land up to their delay
	// later; a failover a Redis primary's kill or pause started may end
	// up to an election after the heal.
	Linger time.Duration
}

// History is every operation and fault event of a campaign. Its methods are
// safe for concurrent use.
type History struct {
	start time.Time

	mu       sync.Mutex
	ops      []*Op
	faults   []FaultEvent
	heldRows int
	resyncs  int
}

// NewHistory starts an empty history; times print relative to now.
func NewHistory() *History { return &History{start: time.Now()} }

// Invoke records an operation's invocation and returns it; Done records its
// completion.
func (h *History) Invoke(o Op) *Op {
	o.Invoke = time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	o.ID = len(h.ops)
	op := &o
	h.ops = append(h.ops, op)
	return op
}

// Done records the completion of op, which its caller filled in.
func (h *History) Done(op *Op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	op.Complete = time.Now()
}

// Fault records a fault event.
func (h *History) Fault(name string, heal bool) {
	h.addFault(FaultEvent{Fault: name, Heal: heal, N: -1})
}

// fault records the start or the heal of a scheduled fault.
func (h *History) fault(f fault, heal bool) {
	ev := FaultEvent{Fault: f.String(), Heal: heal, N: f.n, Kind: f.Kind(), Activity: f.activity}
	switch f.kind {
	case LateCommit, LateDeduct:
		ev.Linger = f.delay
	case RedisKill, RedisPause:
		// A pause past the node timeout has started a failover that the
		// heal does not stop: the replica may be promoted, and the old
		// primary demoted, after it.
		ev.Linger = redistopo.NodeTimeout + time.Second
	}
	h.addFault(ev)
}

// heldRow is the kind of the events rowHeld records, numbered from heldRowN.
const (
	heldRow  = "held-status-commit"
	heldRowN = 1_000_000
)

// rowHeld records that a late-status-commit holds the COMMIT of an expiry of
// the activity for d: the activity's row stays held until it lands. The
// late-status-commit's own events have no linger: what it holds after its
// heal is these rows.
func (h *History) rowHeld(activity int64, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	h.heldRows++
	n, name := heldRowN+h.heldRows, fmt.Sprintf("%s act=%d by %v", heldRow, activity, d.Round(time.Millisecond))
	h.faults = append(h.faults, FaultEvent{At: now, Fault: name, N: n, Kind: heldRow, Activity: activity},
		FaultEvent{At: now.Add(d), Fault: name, N: n, Kind: heldRow, Activity: activity, Heal: true})
}

func (h *History) addFault(ev FaultEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev.At = time.Now()
	h.faults = append(h.faults, ev)
}

// Ops returns a copy of every completed operation, by invocation.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Op, 0, len(h.ops))
	for _, o := range h.ops {
		if !o.Complete.IsZero() {
			out = append(out, *o)
		}
	}
	return out
}

// Faults returns a copy of the fault events.
func (h *History) Faults() []FaultEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]FaultEvent(nil), h.faults...)
}

// at formats t relative to the history's start.
func (h *History) at(t time.Time) string {
	return fmt.Sprintf("%8.3fs", t.Sub(h.start).Seconds())
}

// Around renders the operations for which match is true, and the fault
// events from a second before the first of them to a second after the last,
// merged in time order: the history around a violation.
func (h *History) Around(ops []Op, match func(Op) bool) string {
	type line struct {
		t    time.Time
		text string
	}
	var lines []line
	var first, last time.Time
	for _, o := range ops {
		if !match(o) {
			continue
		}
		if first.IsZero() || o.Invoke.Before(first) {
			first = o.Invoke
		}
		if o.Complete.After(last) {
			last = o.Complete
		}
		lines = append(lines, line{o.Invoke, fmt.Sprintf("  %s..%s %s", h.at(o.Invoke), h.at(o.Complete), o)})
	}
	if len(lines) == 0 {
		return "  (no operation)\n"
	}
	for _, f := range h.Faults() {
		if f.At.Before(first.Add(-time.Second)) || f.At.After(last.Add(time.Second)) {
			continue
		}
		what := "fault"
		if f.Heal {
			what = "heal "
		}
		lines = append(lines, line{f.At, fmt.Sprintf("  %s           %s %s", h.at(f.At), what, f.Fault)})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].t.Before(lines[j].t) })
	const most = 60
	var b strings.Builder
	if len(lines) > most {
		fmt.Fprintf(&b, "  (%d earlier lines left out)\n", len(lines)-most)
		lines = lines[len(lines)-most:]
	}
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}
