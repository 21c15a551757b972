package order

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// Prices (docs/API.md "Prices"): an activity's price is copied onto each
// order in the transaction that sells its unit, so what a payment must
// match is the price at the sale, whatever the activity's price becomes.

// SetPrice changes the activity's price, for the units sold from then on
// (orders keep theirs); 0 and "" remove it. The price must pass
// seckill.ValidPrice. It returns the activity as stored, or
// ErrActivityNotFound.
func (s *Store) SetPrice(ctx context.Context, activityID, priceMinor int64, currency string) (seckill.Activity, error) {
	if err := seckill.ValidPrice(priceMinor, currency); err != nil {
		return seckill.Activity{}, fmt.Errorf("order: price of activity %d: %w", activityID, err)
	}
	price, cur := optionalPrice(priceMinor, currency)
	var a activityRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&activityRow{}).Where("id = ?", activityID).
			Updates(map[string]any{"price_minor": price, "currency": cur})
		if res.Error != nil {
			return fmt.Errorf("order: set price of activity %d: %w", activityID, res.Error)
		}
		if err := tx.Take(&a, activityID).Error; err != nil {
			return activityErr(activityID, err)
		}
		return nil
	})
	if err != nil {
		return seckill.Activity{}, err
	}
	return a.activity(), nil
}
