package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// JoinAddresses is how many client addresses the join limit remembers; the
// least recently used is forgotten first.
const JoinAddresses = 100_000

// join limits a waiting-room join (behind requireUser): the client
// address's bucket of joins (SECKILL_RATE_JOINS_PER_ADDRESS), so one host
// cannot fill a room with forged user ids; then, as a purchase, the user's
// bucket and the global one.
func (l *rateLimits) join() gin.HandlerFunc {
	purchase := l.purchase()
	return func(c *gin.Context) {
		if l.joins != nil {
			lim := l.joins.get(addressKey(c.ClientIP()))
			if !lim.Allow() {
				l.m.rateLimited.WithLabelValues("address").Inc()
				abortWithError(c, &seckill.Error{Code: seckill.EBusy,
					Message: "too many waiting-room joins from this address; try again later", RetryAfter: refillTime(lim)})
				return
			}
		}
		purchase(c)
	}
}
