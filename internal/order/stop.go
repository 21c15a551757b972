package order

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
)

// Stopping a sale (docs/API.md "Stopping a sale"): the database keeps what
// Redis's flags say (internal/stock), so a reload restores them.

// SetPaused marks the activity paused since at, keeping the first time when
// it is paused already; with at zero it clears the mark (resume). It
// returns the activity as stored, or ErrActivityNotFound.
func (s *Activities) SetPaused(ctx context.Context, activityID int64, at time.Time) (seckill.Activity, error) {
	var v any = gorm.Expr("NULL")
	if !at.IsZero() {
		v = gorm.Expr("COALESCE(paused_at, ?)", storedTime(at))
	}
	return s.updateActivity(ctx, activityID, "pause", map[string]any{"paused_at": v})
}

// EndActivity moves the activity's window to [startsAt, endsAt): an end
// now, before or during the sale. It returns the activity as stored, or
// ErrActivityNotFound.
func (s *Activities) EndActivity(ctx context.Context, activityID int64, startsAt, endsAt time.Time) (seckill.Activity, error) {
	return s.updateActivity(ctx, activityID, "end", map[string]any{"starts_at": storedTime(startsAt), "ends_at": storedTime(endsAt)})
}

// derefTime is a nullable time as the domain holds it: zero for NULL.
func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
