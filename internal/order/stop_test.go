package order

import (
	"context"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// An end before the start stores an empty window (starts_at = ends_at =
// the end) on every backend, the embedded SQLite included: the window's
// check allows it, and the activity reads back ended.
// Can fail: on the schema before 00013, "CHECK constraint failed:
// chk_activities_window" (SQLite) or "CONSTRAINT `chk_activities_window`
// failed" (MariaDB).
func TestEndActivityBeforeItsStart(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Microsecond)
		a, err := s.Activities.CreateActivity(ctx, seckill.Activity{Name: "launch", TotalStock: 3, StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ended, err := s.Activities.EndActivity(ctx, a.ID, now, now)
		if err != nil {
			t.Fatalf("EndActivity before the start: %v", err)
		}
		if !ended.StartsAt.Equal(now) || !ended.EndsAt.Equal(now) || ended.StatusAt(now, 3) != seckill.StatusEnded {
			t.Errorf("ended before the start: %s..%s, status %s; want both at %s, ended", ended.StartsAt, ended.EndsAt, ended.StatusAt(now, 3), now)
		}
		if _, err := s.Activities.EndActivity(ctx, a.ID, now, now.Add(-time.Second)); err == nil {
			t.Error("a window ending before its start was stored")
		}
	})
}
