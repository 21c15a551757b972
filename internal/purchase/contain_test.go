package purchase

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/promreg"
)

// A panic inside a batch fails that batch, each buyer not yet answered
// getting 503, and returns to the leader: without contain it killed the
// leader goroutine and with it the process and every activity's queue.
func TestContainedPanicFailsOnlyItsBatch(t *testing.T) {
	p := &seller{m: newMetrics(promreg.NewRegistrar(nil, nil)), log: slog.New(slog.DiscardHandler)}
	batch := []*ticket{newTicket(seckill.BuyRequest{UserID: 1}), newTicket(seckill.BuyRequest{UserID: 2})}
	batch[0].answer(seckill.Order{ID: "sold-before-the-panic"}, nil)

	p.contain(7, batch, func() { panic("index out of range [5] with length 3") })

	<-batch[0].done
	if got := batch[0].out; got.err != nil || got.order.ID != "sold-before-the-panic" {
		t.Errorf("first buyer: %+v, want its answer from before the panic", got)
	}
	var e *seckill.Error
	<-batch[1].done
	if got := batch[1].out; !errors.As(got.err, &e) || e.Code != seckill.EUnavailable {
		t.Errorf("second buyer: %+v, want 503 unavailable", got)
	}
	if got := batch[0].out; got.order.ID != "sold-before-the-panic" {
		t.Errorf("first buyer answered twice: %+v", got)
	}
}
