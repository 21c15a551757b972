package purchase_test

import (
	"context"
	"sync"
	"testing"

	"github.com/seckill-oss/seckill"
)

// Stock changed while buyers buy: the books balance after every change and
// no change ever leaves more orders than the total.
func TestAdjustStockDuringASale(t *testing.T) {
	f := newFixture(t)
	id := f.activity(t, 50)
	ctx := context.Background()

	var wg sync.WaitGroup
	for u := int64(1); u <= 120; u++ {
		wg.Go(func() {
			_, err := f.buy(ctx, id, u)
			if err != nil && code(err) != seckill.ESoldOut && code(err) != seckill.EBusy {
				t.Errorf("buyer %d: %v", u, err)
			}
		})
	}
	for _, total := range []int64{30, 80, 40, 100, 60} {
		r, err := f.svc.AdjustStock(ctx, id, total)
		switch code(err) {
		case "":
			if r.Sold > total || r.Remaining != total-r.Sold {
				t.Errorf("adjust to %d: %+v", total, r)
			}
		case seckill.EInvalid, seckill.EBusy: // below what was sold by then; or the lock stayed busy
		default:
			t.Errorf("adjust to %d: %v", total, err)
		}
	}
	wg.Wait()
	a, err := f.svc.Audit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Oversold || !a.Consistent || a.Orders > a.TotalStock {
		t.Fatalf("books after the sale: %+v", a)
	}
	// Below what is sold: refused, and nothing changes.
	if a.Orders > 1 {
		if _, err := f.svc.AdjustStock(ctx, id, a.Orders-1); code(err) != seckill.EInvalid {
			t.Fatalf("reduce below %d sold: %v, want invalid_request", a.Orders, err)
		}
		if b, _ := f.svc.Audit(ctx, id); b.TotalStock != a.TotalStock || !b.Consistent {
			t.Fatalf("a refused reduction changed the books: %+v -> %+v", a, b)
		}
	}
}
