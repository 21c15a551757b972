package order

import (
	"context"
	"fmt"

	"github.com/seckill-oss/seckill"
)

// Prices (docs/API.md "Prices"): an activity's price is copied onto each
// order in the transaction that sells its unit, so what a payment must
// match is the price at the sale, whatever the activity's price becomes.

// SetPrice changes the activity's price, for the units sold from then on
// (orders keep theirs); 0 and "" remove it. The price must pass
// seckill.ValidPrice. It returns the activity as stored, or
// ErrActivityNotFound.
func (s *Activities) SetPrice(ctx context.Context, activityID, priceMinor int64, currency string) (seckill.Activity, error) {
	if err := seckill.ValidPrice(priceMinor, currency); err != nil {
		return seckill.Activity{}, fmt.Errorf("order: price of activity %d: %w", activityID, err)
	}
	price, cur := optionalPrice(priceMinor, currency)
	return s.updateActivity(ctx, activityID, "set price", map[string]any{"price_minor": price, "currency": cur})
}
