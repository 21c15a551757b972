package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/seckill-oss/seckill/internal/stock"
)

// ledgerEvery is how often the ledger watch reads each activity's ledger.
const ledgerEvery = time.Second

// ledgerWatch reads each activity's stock ledger in Redis (stock.Ledger:
// loaded == remaining + units in the epoch's deduct receipts - the epoch's
// order returns) all through the campaign. The books sweep repairs an
// undercount by reloading, which starts a new epoch and hides it from the
// final state; a unit taken twice for one receipt shows only while its
// epoch lasts.
//
// A deduct receipt lives stock.ReceiptTTL. One that expires still counts:
// the watch remembers what it last read of each and, when a receipt is gone
// after its time, keeps that. One gone before its time was lost with the
// writes a Redis failover lost (and so were its units): it is forgotten.
type ledgerWatch struct {
	stocks *stock.Store
	acts   []int64
	seen   map[int64]map[string]seenReceipt // the receipts of the last read
	gone   map[int64]map[string]stock.Receipt
	broken map[ledgerEpoch]ledgerBreak
	reads  int
}

type seenReceipt struct {
	r       stock.Receipt
	expires time.Time
}

type ledgerEpoch struct{ activity, epoch int64 }

// ledgerBreak is the first read of an epoch whose ledger was off.
type ledgerBreak struct {
	activity, epoch, off int64
	at                   time.Time
	ledger               string
}

func newLedgerWatch(stocks *stock.Store, acts []int64) *ledgerWatch {
	return &ledgerWatch{stocks: stocks, acts: acts, seen: map[int64]map[string]seenReceipt{},
		gone: map[int64]map[string]stock.Receipt{}, broken: map[ledgerEpoch]ledgerBreak{}}
}

// every runs read every d until ctx ends: the watches' loop.
func every(ctx context.Context, d time.Duration, read func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		read(ctx)
	}
}

// readAll reads each activity's ledger once. A read that fails (Redis
// paused, failing over, behind a toxic) is skipped: the next one looks.
func (lw *ledgerWatch) readAll(ctx context.Context) {
	for _, a := range lw.acts {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		l, err := lw.stocks.Ledger(rctx, a)
		cancel()
		switch {
		case errors.Is(err, stock.ErrNotLoaded):
			// Redis lost its data: the next load starts a new epoch.
			lw.forget(a, time.Now())
			continue
		case err != nil:
			continue
		}
		lw.reads++
		lw.account(a, l, time.Now())
	}
}

// forget drops what was seen of a's receipts: gone before their time.
func (lw *ledgerWatch) forget(a int64, now time.Time) { lw.account(a, stock.Ledger{}, now) }

// account takes in a read of a's ledger at now and checks it.
func (lw *ledgerWatch) account(a int64, l stock.Ledger, now time.Time) {
	if lw.gone[a] == nil {
		lw.gone[a] = map[string]stock.Receipt{}
	}
	for k, s := range lw.seen[a] {
		if _, ok := l.Deducts[k]; !ok && !s.expires.After(now.Add(ledgerEvery)) {
			lw.gone[a][k] = s.r // expired: it still counts
		}
	}
	seen := make(map[string]seenReceipt, len(l.Deducts))
	for k, r := range l.Deducts {
		seen[k] = seenReceipt{r: r, expires: now.Add(r.TTL)}
	}
	lw.seen[a] = seen
	if l.Deducts == nil {
		return
	}
	withGone := l
	withGone.Deducts = make(map[string]stock.Receipt, len(l.Deducts)+len(lw.gone[a]))
	for k, r := range lw.gone[a] {
		withGone.Deducts[k] = r
	}
	for k, r := range l.Deducts {
		withGone.Deducts[k] = r
	}
	off := withGone.Off()
	e := ledgerEpoch{a, l.Epoch}
	if _, seen := lw.broken[e]; off == 0 || seen {
		return
	}
	lw.broken[e] = ledgerBreak{activity: a, epoch: l.Epoch, off: off, at: now,
		ledger: fmt.Sprintf("loaded %d, remaining %d, %d units in the epoch's deduct receipts, %d returned", l.Loaded, l.Remaining, withGone.Held(), l.Returned())}
}

// breaks returns the epochs found off, in the order they were found.
func (lw *ledgerWatch) breaks() []ledgerBreak {
	out := make([]ledgerBreak, 0, len(lw.broken))
	for _, b := range lw.broken {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}
