package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/luascript"
)

// ErrNoLedger is returned by Ledger for a stock loaded before loads recorded
// what they put in: its ledger cannot be read.
var ErrNoLedger = errors.New("stock: loaded without its ledger")

var ledgerScript = luascript.LoadWithPrelude(luaFiles, "ledger.lua")

// Ledger is an activity's stock and every receipt it has, read in one step:
// what the ledger (package doc) is checked on.
type Ledger struct {
	Remaining, Epoch, Loaded int64
	// Deducts are the deduct receipts alive, of every epoch, by key.
	Deducts map[string]Receipt
	// Returns are the order-return receipts alive, by key: the epoch each
	// returned in and the units it put back.
	Returns map[string]Receipt
}

// Receipt is one deduct receipt: the units its grant holds, taken in Epoch.
type Receipt struct {
	Epoch, Units int64
	TTL          time.Duration // left to live when read
}

// Off is loaded - remaining - Held + Returned: 0 while every unit out of the
// stock is in one receipt.
func (l Ledger) Off() int64 { return l.Loaded - l.Remaining - l.Held() + l.Returned() }

// Held is the units the epoch's deduct receipts hold.
func (l Ledger) Held() int64 { return epochUnits(l.Deducts, l.Epoch) }

// Returned is the units the epoch's order returns put back.
func (l Ledger) Returned() int64 { return epochUnits(l.Returns, l.Epoch) }

// epochUnits is the units of the receipts of the epoch.
func epochUnits(receipts map[string]Receipt, epoch int64) int64 {
	var n int64
	for _, r := range receipts {
		if r.Epoch == epoch {
			n += r.Units
		}
	}
	return n
}

// Ledger reads the activity's ledger, or ErrNotLoaded, or ErrNoLedger. It
// scans Redis's keys (on the node holding the activity, in Cluster mode):
// for checks and audits, not for the purchase path.
func (s *Store) Ledger(ctx context.Context, activityID int64) (Ledger, error) {
	l := Ledger{Deducts: map[string]Receipt{}, Returns: map[string]Receipt{}}
	prefix := keys.Glob(s.space.Activity(activityID, ""))
	reply, err := ledgerScript.Run(ctx, s.rdb, []string{s.key(activityID)}, prefix+"deduct:*", prefix+"returned:*").Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return l, fmt.Errorf("stock: ledger of activity %d: %w", activityID, ErrNotLoaded)
	case err != nil:
		return l, fmt.Errorf("stock: ledger of activity %d: %w", activityID, err)
	case len(reply) != 5:
		return l, fmt.Errorf("stock: ledger of activity %d: unexpected reply %v", activityID, reply)
	}
	if reply[2] == "" {
		return l, fmt.Errorf("stock: ledger of activity %d: %w", activityID, ErrNoLedger)
	}
	var nums [3]int64
	for i := range nums {
		if nums[i], err = strconv.ParseInt(fmt.Sprint(reply[i]), 10, 64); err != nil {
			return l, fmt.Errorf("stock: ledger of activity %d: %w", activityID, err)
		}
	}
	l.Remaining, l.Epoch, l.Loaded = nums[0], nums[1], nums[2]
	deducts, _ := reply[3].([]any)
	for i := 0; i+2 < len(deducts); i += 3 {
		epoch, units, ok := parseReceipt(fmt.Sprint(deducts[i+1]))
		ttl, _ := deducts[i+2].(int64)
		if !ok {
			return l, fmt.Errorf("stock: ledger of activity %d: unreadable receipt %q", activityID, deducts[i+1])
		}
		l.Deducts[fmt.Sprint(deducts[i])] = Receipt{Epoch: epoch, Units: units, TTL: time.Duration(ttl) * time.Millisecond}
	}
	returns, _ := reply[4].([]any)
	for i := 0; i+1 < len(returns); i += 2 {
		epoch, units, err := parseReturn(fmt.Sprint(returns[i+1]))
		if err != nil {
			return l, fmt.Errorf("stock: ledger of activity %d: unreadable return receipt %q", activityID, returns[i+1])
		}
		l.Returns[fmt.Sprint(returns[i])] = Receipt{Epoch: epoch, Units: units}
	}
	return l, nil
}

// parseReturn reads an order return's receipt: "<epoch>:<units>", or
// "<epoch>" (one unit) as written before quantities.
func parseReturn(v string) (epoch, units int64, err error) {
	e, u, found := strings.Cut(v, ":")
	if epoch, err = strconv.ParseInt(e, 10, 64); err != nil || !found {
		return epoch, 1, err
	}
	units, err = strconv.ParseInt(u, 10, 64)
	return epoch, units, err
}

// parseReceipt reads "<epoch>:<units>", and "<epoch>:<units>:<buyers>"
// (deduct.lua) as well.
func parseReceipt(v string) (epoch, units int64, ok bool) {
	e, u, found := strings.Cut(v, ":")
	if !found {
		return 0, 0, false
	}
	u, _, _ = strings.Cut(u, ":")
	epoch, err1 := strconv.ParseInt(e, 10, 64)
	units, err2 := strconv.ParseInt(u, 10, 64)
	return epoch, units, err1 == nil && err2 == nil
}
