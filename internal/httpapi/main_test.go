package httpapi

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // no debug printing of routes
	code := m.Run()
	if reportAPIViolations() && code == 0 {
		code = 1
	}
	os.Exit(code)
}
