package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// Stopper pauses, resumes and ends activities' sales (docs/API.md
// "Stopping a sale"); *books.Service implements it. Without it the routes
// are not served.
type Stopper interface {
	Pause(ctx context.Context, id int64) (seckill.ActivityView, error)
	Resume(ctx context.Context, id int64) (seckill.ActivityView, error)
	End(ctx context.Context, id int64) (seckill.ActivityView, error)
}

// addStopRoutes adds POST /admin/v1/activities/{id}/pause, /resume and
// /end to the ops API.
func addStopRoutes(admin *gin.RouterGroup, st Stopper) {
	if st == nil {
		return
	}
	admin.POST("/activities/:id/pause", handleStop(st.Pause))
	admin.POST("/activities/:id/resume", handleStop(st.Resume))
	admin.POST("/activities/:id/end", handleStop(st.End))
}

// handleStop answers one of the stop routes: 200 with the activity.
func handleStop(do func(ctx context.Context, id int64) (seckill.ActivityView, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		v, err := do(c.Request.Context(), id)
		reply(c, http.StatusOK, newActivityResponse(v), err)
	}
}
