package books

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// SetPrice changes the activity's price (docs/API.md "Prices") for the
// units sold from then on; orders keep the price of their sale, which the
// database copies onto each order in the transaction that sells its unit,
// so no cache here decides a price. 0 and "" remove the price. This
// instance shows the new price at once; another one from its next read of
// the activity (reconcile, audit, stock change or restart).
func (s *Service) SetPrice(ctx context.Context, id, priceMinor int64, currency string) (seckill.ActivityView, error) {
	if err := seckill.ValidPrice(priceMinor, currency); err != nil {
		return seckill.ActivityView{}, err
	}
	if err := s.cfg.priceRequired(priceMinor); err != nil {
		return seckill.ActivityView{}, err
	}
	a, err := s.orders.Activities.SetPrice(ctx, id, priceMinor, currency)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		return seckill.ActivityView{}, seckill.NoActivity(id)
	case err != nil:
		return seckill.ActivityView{}, seckill.Unavailable("the order database did not answer; the price is unchanged", err)
	}
	s.catalog.Put(a)
	s.log.InfoContext(ctx, "activity price changed", "activity_id", id, "price_minor", priceMinor, "currency", currency)
	return s.Activity(ctx, id)
}

// priceRequired refuses a missing price when the service requires one.
func (c Config) priceRequired(priceMinor int64) error {
	if c.RequirePrice && priceMinor == 0 {
		return seckill.Errorf(seckill.EInvalid, "price_minor and currency are required: payments are on (SECKILL_STRICT=false lifts this), and a payment cannot prove an order without a price paid")
	}
	return nil
}
