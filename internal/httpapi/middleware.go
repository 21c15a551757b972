package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/seckill-oss/seckill"

	"github.com/seckill-oss/seckill/internal/tracing"
)

// requestID names the request: the caller's X-Request-ID when it is 1-64
// characters of [A-Za-z0-9._-], else a fresh one (newRequestID). It is
// echoed in the response, logged, and sent to the user check and the
// payment provider, so a buyer's id is taken only in a shape that cannot
// inject anything into their logs or headers (quotes, commas, semicolons,
// spaces). The request's context carries it (tracing.WithRequestID), for
// the outgoing calls and the access log alike.
func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.Request.Header.Get("X-Request-ID")
		if !wellFormedRequestID(id) {
			id = newRequestID()
		}
		c.Writer.Header()["X-Request-Id"] = []string{id} // the canonical key, as Header.Set would write it
		c.Request = c.Request.WithContext(tracing.WithRequestID(c.Request.Context(), id))
		c.Next()
	}
}

// requestIDPrefix starts every id this process makes: 65 random bits, so
// two instances (or two runs of one) never make the same ids.
var (
	requestIDPrefix = rand.Text()[:13]
	requestIDCount  atomic.Uint64
)

// newRequestID is a request id no other request has: this process's
// random prefix and a count in base 36, such as "K7Q2M4XZ5B3DA-1j3". A
// random id per request read the kernel's random source each time, about
// 0.8 µs; nothing needs the id to be unpredictable, only unique.
func newRequestID() string {
	var buf [32]byte
	b := append(append(buf[:0], requestIDPrefix...), '-')
	return string(strconv.AppendUint(b, requestIDCount.Add(1), 36))
}

// wellFormedRequestID reports whether id has 1 to maxRequestID characters,
// all letters, digits, '.', '_' or '-'.
func wellFormedRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// observe writes the access log and the request metrics. It never logs
// headers: the Authorization header carries the admin token. The log's
// record is built only when its level is on (SECKILL_LOG_LEVEL=error
// drops every answer's but the 5xx).
func observe(log *slog.Logger, m *metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		elapsed := time.Since(start)

		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		status, method := c.Writer.Status(), methodLabel(c.Request.Method)
		m.answered(route, method, status, elapsed)

		level := slog.LevelInfo
		if status >= http.StatusInternalServerError {
			level = slog.LevelError
		}
		ctx := c.Request.Context()
		if !log.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("request_id", tracing.RequestID(ctx)),
			slog.String("method", method),
			slog.String("route", route),
			slog.Int("status", status),
			// Milliseconds, named so: slog.Duration would print nanoseconds
			// as a bare number in JSON.
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			slog.String("remote", c.Request.RemoteAddr),
		}
		if id, ok := c.Get(keyUserID); ok {
			attrs = append(attrs, slog.Any("user_id", id))
		}
		if code := c.GetString(keyErrorCode); code != "" {
			attrs = append(attrs, slog.String("code", code))
		}
		if err := c.Errors.Last(); err != nil {
			attrs = append(attrs, slog.String("err", err.Error()))
		}
		log.LogAttrs(ctx, level, "http request", attrs...)
	}
}

// recoverPanics answers a panicking handler with 500 internal; the panic and
// its stack go to the log, never to the client.
func recoverPanics() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { //nolint:errorlint // a panic value, compared as net/http itself does; never wrapped
				// net/http's way to drop a connection on purpose
				panic(v)
			}
			err := fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			if c.Writer.Written() {
				_ = c.Error(err)
			} else {
				respondError(c, err)
			}
			c.Abort()
		}()
		c.Next()
	}
}

// limitBody refuses bodies larger than limit: at once when Content-Length
// says so, else when a handler reads past the limit (readBody).
func limitBody(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			// The unread body would keep the connection busy; close it.
			c.Header("Connection", "close")
			abortWithError(c, seckill.Errorf(seckill.ETooLarge, "the request body is larger than %d bytes", limit))
			return
		}
		if c.Request.ContentLength != 0 { // 0: net/http's server gives no body to read (http.NoBody)
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// requireUser reads the buyer's X-User-ID, answering 401 without one, or,
// with Config.IdentitySecret, without the gateway's signature of it. Every
// answer of a route behind it depends on the header (markPerUser).
func requireUser(cfg Config) gin.HandlerFunc {
	return func(c *gin.Context) {
		markPerUser(c)
		id, err := verifiedUser(c.Request, cfg)
		if err != nil {
			// RFC 9110 asks a 401 for a challenge; the buyer's identity is
			// the gateway's X-User-ID header, so the challenge names it.
			// A signed body over the limit is a 413, with none.
			if e := contractError(err); e.Code == seckill.EUnauthenticated {
				c.Header("WWW-Authenticate", buyerChallenge)
			}
			abortWithError(c, err)
			return
		}
		c.Set(keyUserID, id)
		c.Next()
	}
}

// verifiedUser is the request's X-User-ID, checked against the gateway's
// signature when Config.IdentitySecret is set.
func verifiedUser(r *http.Request, cfg Config) (int64, error) {
	id, err := parseUserID(r.Header)
	if err != nil {
		return 0, err
	}
	if err := checkIdentitySignature(r, strconv.FormatInt(id, 10), cfg); err != nil {
		return 0, err
	}
	return id, nil
}

// buyerChallenge is the WWW-Authenticate of a buyer 401.
const buyerChallenge = `X-User-ID realm="seckill"`

// adminPrefix starts every path of the ops API.
const adminPrefix = "/admin/"

// requireAdminUnder lets through requests with the admin bearer token, and
// checks it on every request whose path is under prefix (or is prefix without
// its slash), whether a route matches it or not: unknown paths and wrong
// methods answer 401 (or 403 admin_disabled) like the real endpoints, so the
// ops API cannot be mapped without the token. The comparison is of SHA-256
// digests in constant time, so neither the token's bytes nor its length leak
// through timing. Without a token configured the ops API is disabled, never
// open.
//
// A wrong or missing token is answered 401 at once; after
// AdminFailureLimit of them from one address within AdminFailureWindow the
// address's admin requests are answered 429 whatever their token
// (adminFailures): guessing the token online is refused, never slowed down.
func requireAdminUnder(prefix, token string, fails *adminFailures) gin.HandlerFunc {
	want := sha256.Sum256([]byte(token))
	return func(c *gin.Context) {
		if p := c.Request.URL.Path; !strings.HasPrefix(p, prefix) && p != strings.TrimSuffix(prefix, "/") {
			c.Next()
			return
		}
		// gin sets Allow before a 405; it would list the routes to a caller
		// without the token.
		if token == "" {
			c.Writer.Header().Del("Allow")
			abortWithError(c, seckill.Errorf(seckill.EAdminDisabled, "the ops API is disabled: no admin token is configured"))
			return
		}
		got, wellFormed := bearerToken(c.Request.Header)
		sum := sha256.Sum256([]byte(got))
		ok := subtle.ConstantTimeCompare(sum[:], want[:]) == 1 && wellFormed
		if retry, limited := fails.check(addressKey(c.ClientIP()), ok); limited {
			c.Writer.Header().Del("Allow")
			abortWithError(c, &seckill.Error{Code: codeTooManyRequests, RetryAfter: retry,
				Message: "too many failed admin authentications from this address: admin requests are refused until a minute after the last one"})
			return
		}
		if !ok {
			c.Writer.Header().Del("Allow")
			c.Header("WWW-Authenticate", `Bearer realm="seckill-admin"`)
			abortWithError(c, adminUnauthenticated(wellFormed))
			return
		}
		c.Next()
	}
}

// adminUnauthenticated is the 401 of a failed admin authentication: a
// header in the wrong form is told the right one; a well-formed wrong token
// is told it is wrong, not sent to a form it already used.
func adminUnauthenticated(wellFormed bool) error {
	if wellFormed {
		return seckill.Errorf(seckill.EUnauthenticated, "the admin token is wrong")
	}
	return seckill.Errorf(seckill.EUnauthenticated, "send the admin token as Authorization: Bearer <token>")
}

// bearerToken returns the token of the one Authorization header, whose
// scheme must be Bearer (in any case, RFC 9110).
func bearerToken(h http.Header) (string, bool) {
	vals := h.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// rateLimits are the edge's token buckets, built once per server so both
// listeners and every route share them:
//   - purchases: per user, the purchase only (SECKILL_RATE_PER_USER);
//   - buyer: per user, every other buyer route (orders/mine, cancel, and
//     the activity read when it names a user; SECKILL_RATE_PER_USER_READS,
//     off by default), a bucket of its own so polling a result page never
//     spends the purchase's;
//   - global: every public route but the probes (SECKILL_RATE_GLOBAL).
//
// A user's bucket is charged before the global one, so one user's flood
// spends only its own. Past a bucket: 429 busy with the time until a token
// is back.
type rateLimits struct {
	purchases *userBuckets
	buyer     *userBuckets
	global    *rate.Limiter
	joins     *keyedBuckets[string] // per client address (joinlimit.go)
	m         *metrics
}

func newRateLimits(cfg Config, m *metrics) *rateLimits {
	return &rateLimits{
		purchases: newUserBuckets(cfg.UserRate, cfg.UserBurst, cfg.MaxTrackedUsers),
		buyer:     newUserBuckets(cfg.ReadRate, cfg.ReadBurst, cfg.MaxTrackedUsers),
		global:    newBucket(cfg.GlobalRate, cfg.GlobalBurst),
		joins:     newKeyedBuckets[string](cfg.JoinAddressRate, cfg.JoinAddressBurst, JoinAddresses),
		m:         m,
	}
}

// purchase limits a purchase attempt (behind requireUser): the user's
// purchase bucket, then the global one.
func (l *rateLimits) purchase() gin.HandlerFunc {
	return func(c *gin.Context) {
		if l.user(c, l.purchases, c.GetInt64(keyUserID), "too many purchase attempts from this user; try again later") && l.allowGlobal(c) {
			c.Next()
		}
	}
}

// buyerRoute limits another buyer request (behind requireUser): the user's
// buyer bucket, then the global one.
func (l *rateLimits) buyerRoute() gin.HandlerFunc {
	return func(c *gin.Context) {
		if l.user(c, l.buyer, c.GetInt64(keyUserID), "too many requests from this user; try again later") && l.allowGlobal(c) {
			c.Next()
		}
	}
}

// optionalUser limits a public read that needs no identity: when it names a
// user (a valid X-User-ID, signed when signatures are on), that user's buyer
// bucket; then the global one. A missing or bad X-User-ID is not refused
// here: the read does not need one.
func (l *rateLimits) optionalUser(cfg Config) gin.HandlerFunc {
	return func(c *gin.Context) {
		if l.buyer != nil && len(c.Request.Header.Values("X-User-ID")) > 0 {
			if id, err := verifiedUser(c.Request, cfg); err == nil &&
				!l.user(c, l.buyer, id, "too many requests from this user; try again later") {
				return
			}
		}
		if l.allowGlobal(c) {
			c.Next()
		}
	}
}

// globalOnly limits a public route by the global bucket alone.
func (l *rateLimits) globalOnly() gin.HandlerFunc {
	return func(c *gin.Context) {
		if l.allowGlobal(c) {
			c.Next()
		}
	}
}

// user charges userID's bucket of b (nil: off), answering 429 when empty.
func (l *rateLimits) user(c *gin.Context, b *userBuckets, userID int64, msg string) bool {
	if b == nil {
		return true
	}
	lim := b.get(userID)
	if lim.Allow() {
		return true
	}
	l.m.rateLimited.WithLabelValues("user").Inc()
	abortWithError(c, &seckill.Error{Code: seckill.EBusy, Message: msg, RetryAfter: refillTime(lim)})
	return false
}

func (l *rateLimits) allowGlobal(c *gin.Context) bool {
	if l.global == nil || l.global.Allow() {
		return true
	}
	l.m.rateLimited.WithLabelValues("global").Inc()
	abortWithError(c, &seckill.Error{Code: seckill.EBusy, Message: "the service is taking too many requests; try again later", RetryAfter: refillTime(l.global)})
	return false
}

// countPurchases counts every answer of the purchase endpoint by outcome.
func countPurchases(m *metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		outcome := "created"
		if c.Writer.Status() != http.StatusCreated {
			outcome = c.GetString(keyErrorCode)
			if outcome == "" {
				outcome = seckill.EInternal
			}
		}
		m.purchased(outcome)
	}
}
