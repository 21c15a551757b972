package order

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// OrdersByUsersLocked is OrdersByUsers as a locking read, as Written: it
// first locks the activity's row, which a batch's transaction holds from its
// claim to its end, so an order whose COMMIT is still in flight (held past
// its lease, say) is waited for (until ctx ends) rather than missed by a
// plain read that would let its buyer take a second unit meanwhile.
func (s *Orders) OrdersByUsersLocked(ctx context.Context, activityID int64, userIDs []int64) (map[int64]seckill.Order, error) {
	got := make(map[int64]seckill.Order, len(userIDs))
	if len(userIDs) == 0 {
		return got, nil
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var a activityRow
		if err := lockActivity(tx, s.dialect, activityID, "id", &a); err != nil {
			return err
		}
		var rows []orderRow
		if err := tx.Where("activity_id = ? AND user_id IN ?", activityID, userIDs).Find(&rows).Error; err != nil {
			return fmt.Errorf("order: orders of %d users in activity %d: %w", len(userIDs), activityID, err)
		}
		for _, r := range rows {
			got[r.UserID] = r.order()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}
