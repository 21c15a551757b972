package purchase

import (
	"testing"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/promreg"
)

// The per-buyer steps of the purchase path allocate and wake nothing they
// need not: each is paid once an order.

func TestFinalNoOrderAllocatesNothing(t *testing.T) {
	sold := error(soldOut())
	if !finalNoOrder(sold) || finalNoOrder(nil) {
		t.Fatal("finalNoOrder: sold_out is final, no error is not")
	}
	if n := testing.AllocsPerRun(100, func() { finalNoOrder(nil); finalNoOrder(sold) }); n != 0 {
		t.Errorf("finalNoOrder allocates %.0f times a call, want 0", n)
	}
}

func TestCanonicalUUID(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	for in, want := range map[string]bool{
		id.String(): true, "0190A0B2-7C1D-7E3F-8A4B-5C6D7E8F9A0B": false, "{" + id.String() + "}": false,
		"urn:uuid:" + id.String(): false, "order-2": false, "": false, "0190a0b2x7c1d-7e3f-8a4b-5c6d7e8f9a0b": false,
	} {
		if got, ok := canonicalUUID(in); ok != want || (ok && got.String() != in) {
			t.Errorf("canonicalUUID(%q) = %v, %v; want ok %v", in, got, ok, want)
		}
	}
	s := id.String()
	if n := testing.AllocsPerRun(100, func() { canonicalUUID(s) }); n != 0 {
		t.Errorf("canonicalUUID allocates %.0f times a call, want 0", n)
	}
}

// A flight nobody waits for has no channel; the first request that waits
// makes it, and leave closes it.
func TestFlightChannelOnlyForWaiters(t *testing.T) {
	var fs inflights
	b := buyer{1, 2}
	f, done, leader := fs.join(b, seckill.BuyRequest{ActivityID: 1, UserID: 2})
	if !leader || done != nil || f.done != nil {
		t.Fatalf("first join: leader %v, channel %v; want the leader, no channel", leader, f.done)
	}
	_, done, leader = fs.join(b, seckill.BuyRequest{ActivityID: 1, UserID: 2})
	if leader || done == nil {
		t.Fatalf("second join: leader %v, channel %v; want a waiter with a channel", leader, done)
	}
	fs.leave(f, seckill.Order{ID: "o"}, nil, false)
	<-done
	if o, err, ok := f.answerFor(seckill.BuyRequest{ActivityID: 1, UserID: 2}); !ok || err == nil || o.ID != "" {
		t.Errorf("the waiter's answer: %v, %v, %v; want already_purchased", o, err, ok)
	}
	fs.waited()
}

// enqueue gives the leader a token when the queue stops being empty and
// when it reaches overlapMin, not once a buyer: while the leader waits for
// the batch before to be written, each token was a wake-up for nothing.
func TestEnqueueWakesTheLeaderAtItsCounts(t *testing.T) {
	s := &Service{m: newMetrics(promreg.NewRegistrar(nil, nil)), cfg: Config{QueueMax: 100, QueueMaxTotal: 100}}
	a := seckill.Activity{ID: 3}
	// A queue of its own, so no leader takes the tokens.
	q := &queue{activity: a, ready: make(chan struct{}, 1), backDone: make(chan struct{}, 1)}
	s.queues = map[int64]*queue{a.ID: q}
	for n := 1; n <= overlapMin+2; n++ {
		if err := s.enqueue(a, newTicket(seckill.BuyRequest{ActivityID: a.ID, UserID: int64(n)})); err != nil {
			t.Fatal(err)
		}
		woke := false
		select {
		case <-q.ready:
			woke = true
		default:
		}
		if want := n == 1 || n == overlapMin; woke != want {
			t.Errorf("buyer %d queued: leader woken %v, want %v", n, woke, want)
		}
	}
}
