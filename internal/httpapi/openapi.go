package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/seckill-oss/seckill"
)

// handleOpenAPI serves the OpenAPI document of the contract as it was
// given, read-only. Without one it answers 404 not_found like an unknown path.
func handleOpenAPI(doc []byte) gin.HandlerFunc {
	return func(c *gin.Context) {
		if len(doc) == 0 {
			respondError(c, seckill.Errorf(codeNotFound, "this build serves no OpenAPI document; see docs/openapi.yaml in the repository"))
			return
		}
		c.Data(http.StatusOK, "application/yaml", doc)
	}
}
