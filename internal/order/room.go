package order

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// SetWaitingRoom gives the activity the waiting room w, or takes its room
// away when w is nil. It returns the activity as stored, or
// ErrActivityNotFound.
func (s *Store) SetWaitingRoom(ctx context.Context, activityID int64, w *seckill.WaitingRoom) (seckill.Activity, error) {
	at, seed := storedRoom(w)
	var a activityRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&activityRow{}).Where("id = ?", activityID).
			Updates(map[string]any{"waiting_room_opens_at": at, "waiting_room_seed": seed})
		if res.Error != nil {
			return fmt.Errorf("order: set waiting room of activity %d: %w", activityID, res.Error)
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
