package waitingroom

import (
	"context"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
)

// refusePaused refuses a place while ops paused the sale (docs/API.md
// "Stopping a sale"), as the flag every deduct checks says
// (internal/stock/stop.go), read fresh: a join after the pause's answer, on
// any instance, gets no place.
func (r *Room) refusePaused(ctx context.Context, activityID int64) error {
	paused, err := r.st.rdb.HExists(ctx, keys.Stock(r.st.prefix, activityID), "paused").Result()
	switch {
	case err != nil:
		return unavailable(err)
	case paused:
		return seckill.SalePaused()
	}
	return nil
}
