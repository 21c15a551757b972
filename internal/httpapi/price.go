package httpapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/seckill-oss/seckill"
)

// Pricer changes an activity's price (docs/API.md "Prices");
// *books.Service implements it. A Service without it serves no price
// route.
type Pricer interface {
	SetPrice(ctx context.Context, id, priceMinor int64, currency string) (seckill.ActivityView, error)
}

// addPriceRoute adds POST /admin/v1/activities/{id}/price to the ops API.
func addPriceRoute(admin *gin.RouterGroup, p Pricer) {
	if p == nil {
		return
	}
	admin.POST("/activities/:id/price", handleSetPrice(p))
}

func handleSetPrice(p Pricer) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := activityID(c)
		if !ok {
			return
		}
		body, err := readBody(c.Request)
		if err != nil {
			respondError(c, err)
			return
		}
		price, currency, err := decodePrice(body)
		if err != nil {
			respondError(c, err)
			return
		}
		v, err := p.SetPrice(c.Request.Context(), id, price, currency)
		reply(c, http.StatusOK, newActivityResponse(v), err)
	}
}
