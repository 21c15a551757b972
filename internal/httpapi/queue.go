package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// Queue is the buyer side of the waiting rooms (docs/API.md "Waiting room").
type Queue interface {
	Join(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error)
	Mine(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error)
}

// QueueWaiter is a Queue that can hold a queue/mine request until the
// caller's state changes or wait passes (docs/API.md "Waiting for a
// change"); a Queue without it answers ?wait at once.
type QueueWaiter interface {
	MineWait(ctx context.Context, activityID, userID int64, wait time.Duration) (seckill.QueueStatus, error)
}

// RoomAdmin turns an activity's waiting room on (or moves its opening) and
// off.
type RoomAdmin interface {
	SetWaitingRoom(ctx context.Context, id int64, opensAt time.Time) (seckill.ActivityView, error)
	RemoveWaitingRoom(ctx context.Context, id int64) (seckill.ActivityView, error)
}

type queueResponse struct {
	ActivityID    int64  `json:"activity_id"`
	State         string `json:"state"`
	Position      int64  `json:"position,omitempty"`
	ETASeconds    *int64 `json:"eta_s,omitempty"`
	RefreshS      int64  `json:"refresh_s,omitempty"`
	AdmittedUntil string `json:"admitted_until,omitempty"`
	OrderID       string `json:"order_id,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

func newQueueResponse(q seckill.QueueStatus) queueResponse {
	r := queueResponse{
		ActivityID:    q.ActivityID,
		State:         q.State,
		Position:      q.Position,
		RefreshS:      int64(q.Refresh / time.Second),
		AdmittedUntil: formatOptionalTime(q.AdmittedUntil),
		OrderID:       q.OrderID,
		Reason:        q.Reason,
	}
	if q.HasETA {
		s := int64(q.ETA / time.Second)
		r.ETASeconds = &s
	}
	return r
}

type roomResponse struct {
	OpensAt  string `json:"opens_at"`
	Waiting  int64  `json:"waiting"`
	Admitted int64  `json:"admitted"`
}

func newRoomResponse(v *seckill.RoomView) *roomResponse {
	if v == nil {
		return nil
	}
	return &roomResponse{OpensAt: formatTime(v.OpensAt), Waiting: v.Waiting, Admitted: v.Admitted}
}

// addQueueRoutes are the buyer's waiting-room routes; without a Queue they
// are not served.
func addQueueRoutes(buyer *gin.RouterGroup, q Queue, join, read []gin.HandlerFunc) {
	if q == nil {
		return
	}
	buyer.POST("/activities/:id/queue", append(join, handleQueue(q.Join))...)
	buyer.GET("/activities/:id/queue/mine", append(read, handleMine(q))...)
}

// MaxWait is the longest ?wait= of queue/mine, in seconds.
const MaxWait = 30

// handleMine answers queue/mine, held with ?wait=S (1..MaxWait).
func handleMine(q Queue) gin.HandlerFunc {
	mine := handleQueue(q.Mine)
	qw, _ := q.(QueueWaiter)
	return func(c *gin.Context) {
		wait, err := waitQuery(c)
		if err != nil {
			respondError(c, err)
			return
		}
		if wait == 0 || qw == nil {
			mine(c)
			return
		}
		extendDeadlines(c, wait+heldMargin)
		handleQueue(func(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error) {
			return qw.MineWait(ctx, activityID, userID, wait)
		})(c)
	}
}

// heldMargin is what a held request's connection deadlines allow past its
// wait: the status reads around the hold.
const heldMargin = 15 * time.Second

// extendDeadlines lets the request's connection read and write for d more:
// the server's timeouts count from the request's start, and a held request
// outlasts them (its read timeout would cancel it while it waits). A
// writer that cannot (a test's recorder) keeps its own.
func extendDeadlines(c *gin.Context, d time.Duration) {
	rc := http.NewResponseController(c.Writer)
	at := time.Now().Add(d)
	_ = rc.SetReadDeadline(at)
	_ = rc.SetWriteDeadline(at)
}

// waitQuery reads ?wait=: 0 without it, else an integer number of seconds
// from 1 to MaxWait, given once.
func waitQuery(c *gin.Context) (time.Duration, error) {
	vs, ok := c.Request.URL.Query()["wait"]
	if !ok {
		return 0, nil
	}
	if len(vs) != 1 {
		return 0, invalid("query parameter \"wait\" given more than once")
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || n < 1 || n > MaxWait {
		return 0, invalid("wait must be an integer number of seconds from 1 to %d", MaxWait)
	}
	return time.Duration(n) * time.Second, nil
}

func handleQueue(do func(ctx context.Context, activityID, userID int64) (seckill.QueueStatus, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		q, err := do(c.Request.Context(), id, c.GetInt64(keyUserID))
		reply(c, http.StatusOK, newQueueResponse(q), err)
	}
}

// addRoomRoutes are the ops routes of the waiting rooms.
func addRoomRoutes(admin *gin.RouterGroup, ra RoomAdmin) {
	if ra == nil {
		return
	}
	admin.PUT("/activities/:id/waiting-room", func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		body, err := readBody(c.Request)
		var opensAt time.Time
		if err == nil {
			opensAt, err = decodeWaitingRoom(body)
		}
		if err != nil {
			respondError(c, err)
			return
		}
		v, err := ra.SetWaitingRoom(c.Request.Context(), id, opensAt)
		respondActivity(c, v, err)
	})
	admin.DELETE("/activities/:id/waiting-room", func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		v, err := ra.RemoveWaitingRoom(c.Request.Context(), id)
		respondActivity(c, v, err)
	})
}

func respondActivity(c *gin.Context, v seckill.ActivityView, err error) {
	if err != nil {
		respondError(c, err)
		return
	}
	writeJSON(c, http.StatusOK, newActivityResponse(v))
}

// decodeWaitingRoom reads a waiting room: {"opens_at":"..."} or {} (the
// opening then defaults to 30 minutes before the start).
func decodeWaitingRoom(body []byte) (opensAt time.Time, err error) {
	err = decodeObject(body, map[string]func(json.RawMessage) error{
		"opens_at": func(raw json.RawMessage) (err error) {
			opensAt, err = jsonTime(raw, "waiting_room.opens_at")
			return err
		},
	})
	return opensAt, err
}
