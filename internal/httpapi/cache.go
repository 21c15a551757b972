package httpapi

import "github.com/gin-gonic/gin"

// Cache-Control of the answers (docs/API.md "Caching"). A shared cache
// between the app and the service (a CDN, a corporate proxy) must never hand
// one buyer's order to another, nor keep an error; a public activity read
// may be reused for a second, which takes a refresh storm off the service
// without showing a stock that is more than a second old.
const (
	cacheNoStore = "no-store"
	// cachePublicShort is the public activity read's: one second.
	cachePublicShort = "public, max-age=1"
)

// Header values every answer of a kind carries, built once: a header set
// from one of them costs no allocation (Header.Set makes a slice per call,
// and these are set on every answer). The keys are in canonical form and
// the slices are never written to: Header.Add appends to a full slice, so
// it copies.
var (
	headerNoSniff = []string{"nosniff"}
	headerNoStore = []string{cacheNoStore}
	headerVary    = []string{"X-User-ID"}
)

// setSharedHeader sets the canonical key to vals, one of the shared values.
func setSharedHeader(c *gin.Context, key string, vals []string) { c.Writer.Header()[key] = vals }

// noSniff sets X-Content-Type-Options: nosniff on every answer: a browser
// then never guesses a type other than the one the answer names, so
// JSON carrying a caller's text is never run as HTML or script.
func noSniff() gin.HandlerFunc {
	return func(c *gin.Context) {
		setSharedHeader(c, "X-Content-Type-Options", headerNoSniff)
		c.Next()
	}
}

// noStoreByDefault marks every answer no-store before the handler runs; the
// few handlers whose answer may be cached (cachePublic) replace it.
func noStoreByDefault() gin.HandlerFunc {
	return func(c *gin.Context) {
		setSharedHeader(c, "Cache-Control", headerNoStore)
		c.Next()
	}
}

// markPerUser marks an answer that depends on the caller's X-User-ID (the
// 201 and 409 of a purchase, orders/mine, cancel, and their 401s): never
// stored, and, for a cache that ignores no-store, keyed by the header.
func markPerUser(c *gin.Context) {
	setSharedHeader(c, "Cache-Control", headerNoStore)
	setSharedHeader(c, "Vary", headerVary)
}

// cachePublic lets shared caches keep a successful public read for a
// second. It is called on success only: an error keeps noStoreByDefault's.
func cachePublic(c *gin.Context) { c.Header("Cache-Control", cachePublicShort) }
