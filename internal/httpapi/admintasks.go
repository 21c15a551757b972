package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// AdminTasks are the shop's admin tasks beyond the contract's first ops API
// (docs/API.md "Admin tasks"); *books.Service implements them. A Service
// without them serves none of their routes.
type AdminTasks interface {
	ListActivities(ctx context.Context, afterID int64, limit int) ([]seckill.ActivityView, error)
	ListOrders(ctx context.Context, activityID int64, status, afterID string, limit int) ([]seckill.AdminOrder, error)
	MarkRefunded(ctx context.Context, orderID, who string) (seckill.AdminOrder, error)
	AdjustStock(ctx context.Context, id, total int64) (seckill.StockAdjustment, error)
}

// Canceller lets a buyer cancel their unpaid order; *payment.Service
// implements it. Payments without it (or payments off) serve no cancel route.
type Canceller interface {
	Cancel(ctx context.Context, activityID, userID int64) (seckill.Order, error)
}

// Page sizes of the listings.
const (
	defaultPage = 100
	maxRefundBy = 128
)

// listedStatuses are the statuses an order listing may filter on.
var listedStatuses = map[string]bool{
	seckill.OrderStatusCreated: true, seckill.OrderStatusPaid: true, seckill.OrderStatusExpired: true,
	seckill.OrderStatusRefundRequired: true, seckill.OrderStatusRefunded: true,
}

// addAdminTaskRoutes adds the admin tasks' routes to the ops API group.
func addAdminTaskRoutes(admin *gin.RouterGroup, tasks AdminTasks) {
	if tasks == nil {
		return
	}
	admin.GET("/activities", handleListActivities(tasks))
	admin.GET("/activities/:id/orders", handleListOrders(tasks))
	admin.POST("/activities/:id/stock", handleAdjustStock(tasks))
	admin.POST("/orders/:order_id/refund", handleMarkRefunded(tasks))
}

// addCancelRoute adds the buyer's cancel to the buyer API group.
func addCancelRoute(buyer *gin.RouterGroup, c Canceller, guards ...gin.HandlerFunc) {
	if c == nil {
		return
	}
	buyer.POST("/activities/:id/orders/mine/cancel", append(guards, handleCancel(c))...)
}

// pageQuery reads ?cursor= and ?limit= (1..seckill.MaxPage, default 100).
func pageQuery(c *gin.Context) (cursor string, limit int, err error) {
	q := c.Request.URL.Query()
	for name := range q {
		if name != "cursor" && name != "limit" && name != "status" {
			return "", 0, invalid("unknown query parameter %q", truncate(name, 32))
		}
		if len(q[name]) != 1 {
			return "", 0, invalid("query parameter %q given more than once", name)
		}
	}
	limit = defaultPage
	if v := q.Get("limit"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > seckill.MaxPage {
			return "", 0, invalid("limit must be an integer in 1..%d", seckill.MaxPage)
		}
		limit = n
	}
	cursor = q.Get("cursor")
	if cursor != "" && !visibleASCII(cursor, maxOrderID) {
		return "", 0, invalid("cursor must be the next_cursor of a previous page")
	}
	return cursor, limit, nil
}

func nextCursor(n, limit int, last string) *string {
	if n < limit {
		return nil
	}
	return &last
}

func handleListActivities(tasks AdminTasks) gin.HandlerFunc {
	type response struct {
		Activities []activityResponse `json:"activities"`
		NextCursor *string            `json:"next_cursor"`
	}
	return func(c *gin.Context) {
		cursor, limit, err := pageQuery(c)
		if err == nil && c.Query("status") != "" {
			err = invalid("status filters orders, not activities")
		}
		var after int64
		if err == nil && cursor != "" {
			var ok bool
			if after, ok = parseID(cursor); !ok {
				err = invalid("cursor must be the next_cursor of a previous page")
			}
		}
		if err != nil {
			respondError(c, err)
			return
		}
		vs, err := tasks.ListActivities(c.Request.Context(), after, limit)
		if err != nil {
			respondError(c, err)
			return
		}
		out := response{Activities: make([]activityResponse, len(vs))}
		for i, v := range vs {
			out.Activities[i] = newActivityResponse(v)
		}
		if len(vs) > 0 {
			out.NextCursor = nextCursor(len(vs), limit, strconv.FormatInt(vs[len(vs)-1].ID, 10))
		}
		writeJSON(c, http.StatusOK, out)
	}
}

type adminOrderResponse struct {
	orderResponse
	RefundedBy string `json:"refunded_by,omitempty"`
	RefundedAt string `json:"refunded_at,omitempty"`
}

func newAdminOrderResponse(o seckill.AdminOrder) adminOrderResponse {
	return adminOrderResponse{orderResponse: newOrderResponse(o.Order), RefundedBy: o.RefundedBy, RefundedAt: formatOptionalTime(o.RefundedAt)}
}

func handleListOrders(tasks AdminTasks) gin.HandlerFunc {
	type response struct {
		Orders     []adminOrderResponse `json:"orders"`
		NextCursor *string              `json:"next_cursor"`
	}
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		cursor, limit, err := pageQuery(c)
		status := c.Query("status")
		if err == nil && status != "" && !listedStatuses[status] {
			err = invalid("status must be created, paid, expired, refund_required or refunded")
		}
		if err != nil {
			respondError(c, err)
			return
		}
		os, err := tasks.ListOrders(c.Request.Context(), id, status, cursor, limit)
		if err != nil {
			respondError(c, err)
			return
		}
		out := response{Orders: make([]adminOrderResponse, len(os))}
		for i, o := range os {
			out.Orders[i] = newAdminOrderResponse(o)
		}
		if len(os) > 0 {
			out.NextCursor = nextCursor(len(os), limit, os[len(os)-1].ID)
		}
		writeJSON(c, http.StatusOK, out)
	}
}

func handleMarkRefunded(tasks AdminTasks) gin.HandlerFunc {
	return func(c *gin.Context) {
		orderID := c.Param("order_id")
		if !visibleASCII(orderID, maxOrderID) {
			respondError(c, invalid("the order id must be 1-%d visible ASCII characters", maxOrderID))
			return
		}
		body, err := readBody(c.Request)
		var by string
		if err == nil {
			err = decodeObject(body, map[string]func(json.RawMessage) error{
				"by": func(raw json.RawMessage) error {
					s, ok := jsonString(raw)
					if !ok || !seckill.ValidText(s, maxRefundBy) {
						return invalid("by must name who made the refund: 1 to %d characters, no control characters", maxRefundBy)
					}
					by = s
					return nil
				},
			})
		}
		if err == nil && by == "" {
			err = invalid(`"by" is required: who made the refund`)
		}
		if err != nil {
			respondError(c, err)
			return
		}
		o, err := tasks.MarkRefunded(c.Request.Context(), orderID, by)
		reply(c, http.StatusOK, newAdminOrderResponse(o), err)
	}
}

func handleAdjustStock(tasks AdminTasks) gin.HandlerFunc {
	type response struct {
		ActivityID       int64 `json:"activity_id"`
		TotalStockBefore int64 `json:"total_stock_before"`
		TotalStock       int64 `json:"total_stock"`
		Sold             int64 `json:"sold"`
		RemainingStock   int64 `json:"remaining_stock"`
	}
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		body, err := readBody(c.Request)
		var total int64
		if err == nil {
			err = decodeObject(body, map[string]func(json.RawMessage) error{
				"total_stock": func(raw json.RawMessage) error {
					if json.Unmarshal(raw, &total) != nil || total < 1 || total > seckill.MaxTotalStock {
						return invalid("total_stock must be an integer in 1..%d", seckill.MaxTotalStock)
					}
					return nil
				},
			})
		}
		if err == nil && total == 0 {
			err = invalid("total_stock is required")
		}
		if err != nil {
			respondError(c, err)
			return
		}
		r, err := tasks.AdjustStock(c.Request.Context(), id, total)
		reply(c, http.StatusOK, response{ActivityID: r.ActivityID, TotalStockBefore: r.Before, TotalStock: r.TotalStock, Sold: r.Sold, RemainingStock: r.Remaining}, err)
	}
}

func handleCancel(cn Canceller) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		o, err := cn.Cancel(c.Request.Context(), id, c.GetInt64(keyUserID))
		reply(c, http.StatusOK, newOrderResponse(o), err)
	}
}

// conflictCodes of the admin tasks and the cancel, answered 409.
func isTaskConflict(code string) bool {
	return code == seckill.ENotCancellable || code == seckill.ERefundNotRequired
}
