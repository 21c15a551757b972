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
func (s *Activities) SetWaitingRoom(ctx context.Context, activityID int64, w *seckill.WaitingRoom) (seckill.Activity, error) {
	at, seed := storedRoom(w)
	return s.updateActivity(ctx, activityID, "set waiting room", map[string]any{"waiting_room_opens_at": at, "waiting_room_seed": seed})
}

// updateActivity changes the activity's columns and returns it as stored
// after the change, in one transaction, or ErrActivityNotFound; what names
// the change in errors.
func (s *Activities) updateActivity(ctx context.Context, activityID int64, what string, columns map[string]any) (seckill.Activity, error) {
	var a activityRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&activityRow{}).Where("id = ?", activityID).Updates(columns)
		if res.Error != nil {
			return fmt.Errorf("order: %s of activity %d: %w", what, activityID, res.Error)
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
