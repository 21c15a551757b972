package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// readyTimeout bounds a readiness probe, so a hung dependency answers 503
// before the prober gives up on its own.
const readyTimeout = 2 * time.Second

type activityResponse struct {
	ID             int64  `json:"id"`
	Name           string `json:"name"`
	TotalStock     int64  `json:"total_stock"`
	RemainingStock int64  `json:"remaining_stock"`
	StartsAt       string `json:"starts_at"`
	EndsAt         string `json:"ends_at"`
	Status         string `json:"status"`
	PriceMinor     int64  `json:"price_minor,omitempty"` // absent when the activity has no price
	Currency       string `json:"currency,omitempty"`
	// PerUserLimit is always there (docs/API.md "Quantity per buyer").
	PerUserLimit int64 `json:"per_user_limit"`
	// WaitingRoom is absent when the activity has none.
	WaitingRoom *roomResponse `json:"waiting_room,omitempty"`
	// Announced is shown false to ops for an activity hidden from buyers
	// until its start, and absent otherwise.
	Announced *bool `json:"announced,omitempty"`
	// Paused is true while ops paused the sale, and absent otherwise.
	Paused bool `json:"paused,omitempty"`
}

func newActivityResponse(v seckill.ActivityView) activityResponse {
	return activityResponse{
		ID:             v.ID,
		Name:           v.Name,
		TotalStock:     v.TotalStock,
		RemainingStock: v.Remaining,
		StartsAt:       formatTime(v.StartsAt),
		EndsAt:         formatTime(v.EndsAt),
		Status:         v.Status,
		PriceMinor:     v.PriceMinor,
		Currency:       v.Currency,
		PerUserLimit:   v.Limit(),
		WaitingRoom:    newRoomResponse(v.Room),
		Announced:      announced(v.Activity),
		Paused:         v.Paused,
	}
}

// announced is false for an unannounced activity, nil (absent) otherwise.
func announced(a seckill.Activity) *bool {
	if !a.Unannounced {
		return nil
	}
	f := false
	return &f
}

// orderResponse is an order's body, rendered by the domain (seckill.Order.Body)
// so that the order events carry the very same body; a type of its own for
// its hand-written JSON (jsonanswer.go).
type orderResponse seckill.OrderBody

func newOrderResponse(o seckill.Order) orderResponse { return orderResponse(o.Body()) }

// formatTime renders t as the contract writes times (seckill.FormatTime).
func formatTime(t time.Time) string { return seckill.FormatTime(t) }

// formatOptionalTime is formatTime, or "" for the zero time.
func formatOptionalTime(t time.Time) string { return seckill.FormatOptionalTime(t) }

// activityID reads the :id path parameter, answering 400 when it is not a
// positive int64.
func activityID(c *gin.Context) (int64, bool) {
	id, ok := parseID(c.Param("id"))
	if !ok {
		respondError(c, invalid("the activity id must be a positive integer"))
	}
	return id, ok
}

func handleActivity(svc Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		v, err := svc.BuyerActivity(c.Request.Context(), id)
		if err != nil {
			respondError(c, err)
			return
		}
		cachePublic(c)
		writeJSON(c, http.StatusOK, newActivityResponse(v))
	}
}

func handleBuy(svc Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		key, err := parseIdempotencyKey(c.Request.Header)
		if err != nil {
			respondError(c, err)
			return
		}
		body, err := readBody(c.Request)
		var quantity int64
		if err == nil {
			quantity, err = decodePurchaseBody(body)
		}
		if err != nil {
			respondError(c, err)
			return
		}
		o, err := svc.Buy(c.Request.Context(), seckill.BuyRequest{
			ActivityID:     id,
			UserID:         c.GetInt64(keyUserID),
			IdempotencyKey: key,
			Quantity:       quantity,
		})
		if err != nil {
			respondError(c, err)
			return
		}
		writeJSON(c, http.StatusCreated, newOrderResponse(o))
	}
}

func handleMyOrder(svc Service, pay Payments) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		o, err := svc.MyOrder(c.Request.Context(), id, c.GetInt64(keyUserID))
		if err != nil {
			respondError(c, err)
			return
		}
		// The result page is one of the three triggers of the payment's
		// verification.
		if pay != nil && o.Status == seckill.OrderStatusCreated {
			o = pay.Refresh(c.Request.Context(), o)
		}
		writeJSON(c, http.StatusOK, newOrderResponse(o))
	}
}

// handleCreateActivity creates an activity. One whose ends_at has already
// passed is created too, as the contract has it: it answers ended, which
// ops tooling and tests rely on.
func handleCreateActivity(svc Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := readBody(c.Request)
		if err != nil {
			respondError(c, err)
			return
		}
		a, err := decodeCreateActivity(body)
		if err != nil {
			respondError(c, err)
			return
		}
		v, err := svc.CreateActivity(c.Request.Context(), a)
		reply(c, http.StatusCreated, newActivityResponse(v), err)
	}
}

func handlePreload(svc Service) gin.HandlerFunc {
	type response struct {
		ActivityID     int64 `json:"activity_id"`
		RemainingStock int64 `json:"remaining_stock"`
	}
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		remaining, err := svc.Preload(c.Request.Context(), id)
		reply(c, http.StatusOK, response{ActivityID: id, RemainingStock: remaining}, err)
	}
}

func handleAudit(svc Service, pay Payments) gin.HandlerFunc {
	type response struct {
		ActivityID     int64 `json:"activity_id"`
		TotalStock     int64 `json:"total_stock"`
		Orders         int64 `json:"orders"`
		Units          int64 `json:"units"` // the units the orders hold
		RedisRemaining int64 `json:"redis_remaining"`
		Oversold       bool  `json:"oversold"`
		Consistent     bool  `json:"consistent"`
		Expired        int64 `json:"expired"`
		RefundRequired int64 `json:"refund_required"`
		AdmittedOpen   int64 `json:"admitted_open"`
		// DrawSeed is the waiting room's draw seed, once the sale started.
		DrawSeed string `json:"draw_seed,omitempty"`
		// EventsPending: the activity's order events the sink has not
		// acknowledged yet.
		EventsPending int64 `json:"events_pending"`
	}
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		a, err := svc.Audit(c.Request.Context(), id)
		if err != nil {
			respondError(c, err)
			return
		}
		var expired, refundRequired int64
		if pay != nil {
			if expired, refundRequired, err = pay.Counts(c.Request.Context(), id); err != nil {
				respondError(c, err)
				return
			}
		}
		writeJSON(c, http.StatusOK, response{
			ActivityID:     a.ActivityID,
			TotalStock:     a.TotalStock,
			Orders:         a.Orders,
			Units:          a.Units,
			RedisRemaining: a.RedisRemaining,
			Oversold:       a.Oversold,
			Consistent:     a.Consistent,
			Expired:        expired,
			RefundRequired: refundRequired,
			AdmittedOpen:   a.AdmittedOpen,
			DrawSeed:       a.DrawSeed,
			EventsPending:  a.EventsPending,
		})
	}
}

func handleReconcile(svc Service) gin.HandlerFunc {
	type response struct {
		ActivityID int64 `json:"activity_id"`
		TotalStock int64 `json:"total_stock"`
		Orders     int64 `json:"orders"`
		// Before is null when Redis held no stock for the activity: a
		// sentinel number could be read as stock.
		Before  *int64 `json:"before"`
		After   int64  `json:"after"`
		Changed bool   `json:"changed"`
	}
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		r, err := svc.Reconcile(c.Request.Context(), id)
		if err != nil {
			respondError(c, err)
			return
		}
		writeJSON(c, http.StatusOK, response{ActivityID: r.ActivityID, TotalStock: r.TotalStock, Orders: r.Orders,
			Before: r.LoadedBefore(), After: r.After, Changed: r.Changed})
	}
}

type statusResponse struct {
	Status string       `json:"status"`
	Error  *errorDetail `json:"error,omitempty"`
}

func handleHealthz() gin.HandlerFunc {
	return func(c *gin.Context) {
		writeJSON(c, http.StatusOK, statusResponse{Status: "ok"})
	}
}

// handleReadyz answers 200 when Redis and the database answer, else 503 with
// Retry-After; which dependency failed goes to the log only. The check's
// result is shared for ReadyCacheTTL (readyCheck).
func handleReadyz(rc *readyCheck) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if err := rc.ready(ctx); err != nil {
			_ = c.Error(err)
			c.Set(keyErrorCode, seckill.EUnavailable)
			c.Header("Retry-After", retryAfterSeconds(minRetryAfter))
			writeJSON(c, http.StatusServiceUnavailable, statusResponse{
				Status: "unavailable",
				Error:  &errorDetail{Code: seckill.EUnavailable, Message: "a dependency (Redis or the database) does not answer"},
			})
			return
		}
		writeJSON(c, http.StatusOK, statusResponse{Status: "ok"})
	}
}

// handleNotFound answers a path no route serves. opsElsewhere: this is the
// public listener of a split (NewServers), and a path of the ops listener
// (the admin API, /metrics, pprof) is answered with where it is served.
func handleNotFound(opsElsewhere bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if opsElsewhere && isOpsPath(c.Request.URL.Path) {
			respondError(c, seckill.Errorf(codeNotFound,
				"no such endpoint on this address: %s is served on the admin address (SECKILL_ADMIN_ADDR), not on the public one", opsArea(c.Request.URL.Path)))
			return
		}
		respondError(c, seckill.Errorf(codeNotFound, "no such endpoint; see the API contract"))
	}
}

// isOpsPath reports whether path is one the ops listener serves and the
// public one of a split does not.
func isOpsPath(path string) bool {
	return path == "/admin" || strings.HasPrefix(path, adminPrefix) || path == "/metrics" ||
		path == "/debug/pprof" || strings.HasPrefix(path, "/debug/pprof/")
}

// opsArea names what an ops path is part of, for a message.
func opsArea(path string) string {
	switch {
	case path == "/metrics":
		return "/metrics"
	case strings.HasPrefix(path, "/debug/"):
		return "pprof"
	}
	return "the admin API (/admin/...)"
}

func handleMethodNotAllowed() gin.HandlerFunc {
	return func(c *gin.Context) {
		respondError(c, seckill.Errorf(codeMethodNotAllowed, "method %s is not allowed here; see the Allow header", methodLabel(c.Request.Method)))
	}
}
