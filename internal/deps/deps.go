// Package deps pins the project's modules in go.mod while the packages that
// use them are being written. Delete it once every module is imported for real.
package deps

import (
	_ "github.com/alicebob/miniredis/v2"
	_ "github.com/bsm/redislock"
	_ "github.com/gin-gonic/gin"
	_ "github.com/glebarez/sqlite"
	_ "github.com/go-redsync/redsync/v4"
	_ "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	_ "github.com/google/uuid"
	_ "github.com/pressly/goose/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/sony/gobreaker/v2"
	_ "go.uber.org/goleak"
	_ "golang.org/x/time/rate"
	_ "gorm.io/driver/mysql"
	_ "gorm.io/gorm"
)
