// Package testenv gives integration tests the real Redis and MariaDB/MySQL they
// must run against, each test with a namespace of its own.
//
// Where the servers come from, in order:
//  1. SECKILL_TEST_REDIS_URL (go-redis URL) and SECKILL_TEST_MYSQL_DSN (a DSN
//     whose user may create and drop databases; its database part is ignored),
//     as scripts/test.sh sets them after starting the local servers;
//  2. otherwise, when a Docker engine answers, containers started with
//     testcontainers-go (one Redis and one MariaDB per test process);
//  3. otherwise the local servers at their usual addresses
//     (redis://127.0.0.1:6379/0 and root with no password at 127.0.0.1:3306),
//     and the test log says so.
//
// A server that cannot be reached fails the test: safety claims are never
// skipped for want of the real thing.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tcmariadb "github.com/testcontainers/testcontainers-go/modules/mariadb"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
)

// Environment variables that point the tests at servers.
const (
	RedisURLEnv = "SECKILL_TEST_REDIS_URL"
	MySQLDSNEnv = "SECKILL_TEST_MYSQL_DSN"
)

const (
	localRedisURL = "redis://127.0.0.1:6379/0"
	localMySQLDSN = "root:@tcp(127.0.0.1:3306)/"
)

var servers struct {
	once     sync.Once
	redisURL string
	mysqlDSN string
	source   string
	err      error
}

func resolve() {
	r, m := os.Getenv(RedisURLEnv), os.Getenv(MySQLDSNEnv)
	if r != "" && m != "" {
		servers.redisURL, servers.mysqlDSN, servers.source = r, m, "environment"
		return
	}
	if why := dockerUnavailable(); why != "" {
		if r == "" {
			r = localRedisURL
		}
		if m == "" {
			m = localMySQLDSN
		}
		servers.redisURL, servers.mysqlDSN = r, m
		servers.source = "local servers (Docker not available: " + why + ")"
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if r == "" {
		c, err := tcredis.Run(ctx, "redis:7")
		if err != nil {
			servers.err = fmt.Errorf("testenv: start Redis container: %w", err)
			return
		}
		if r, servers.err = c.ConnectionString(ctx); servers.err != nil {
			return
		}
	}
	if m == "" {
		c, err := tcmariadb.Run(ctx, mariadbImage, mariadbOptions()...)
		if err != nil {
			servers.err = fmt.Errorf("testenv: start MariaDB container: %w", err)
			return
		}
		if m, servers.err = c.ConnectionString(ctx); servers.err != nil {
			return
		}
	}
	servers.redisURL, servers.mysqlDSN, servers.source = r, m, "testcontainers"
}

// dockerUnavailable returns why no Docker engine can be used, or "" when one answers.
func dockerUnavailable() (why string) {
	defer func() {
		if r := recover(); r != nil {
			why = fmt.Sprint(r)
		}
	}()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := p.Health(ctx); err != nil {
		return err.Error()
	}
	return ""
}

func get(t testing.TB) {
	t.Helper()
	servers.once.Do(resolve)
	if servers.err != nil {
		t.Fatal(servers.err)
	}
	t.Logf("testenv: using %s", servers.source)
}

// RedisURL returns the URL of the Redis the tests use.
func RedisURL(t testing.TB) string {
	t.Helper()
	get(t)
	return servers.redisURL
}

// Redis returns a client of the test Redis, closed when the test ends. It
// fails the test when Redis does not answer.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatalf("testenv: %s: %v", RedisURLEnv, err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("testenv: Redis at %s does not answer (scripts/test.sh installs and starts it): %v", opt.Addr, err)
	}
	return rdb
}

// Prefix returns a key prefix no other test uses, such as "t:3f9a1c2b:". Keys
// under it are deleted when the test ends, so tests never flush a database
// that other packages share.
func Prefix(t testing.TB) string {
	t.Helper()
	p := "t:" + randomHex(4) + ":"
	rdb := Redis(t)
	t.Cleanup(func() { DeletePrefix(t, rdb, p) })
	return p
}

// DeletePrefix deletes every key under prefix: the test's way to make Redis
// "lose its data" without touching other tests' keys.
func DeletePrefix(t testing.TB, rdb redis.UniversalClient, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("testenv: scan %s*: %v", prefix, err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := rdb.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Errorf("testenv: delete %s*: %v", prefix, err)
			return
		}
		keys = keys[n:]
	}
}

// MySQLDSN creates a fresh, empty database for the test and returns a DSN for
// it (parseTime=true). The database is dropped when the test ends, unless
// SECKILL_TEST_KEEP=1.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	get(t)
	admin, err := mysql.ParseDSN(servers.mysqlDSN)
	if err != nil {
		t.Fatalf("testenv: %s: %v", MySQLDSNEnv, err)
	}
	admin.DBName = ""
	admin.ParseTime = true
	db, err := sql.Open("mysql", admin.FormatDSN())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer db.Close()
	name := "seckill_t_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		t.Fatalf("testenv: MariaDB at %s: create database (scripts/test.sh installs and starts it): %v", admin.Addr, err)
	}
	t.Cleanup(func() {
		if os.Getenv("SECKILL_TEST_KEEP") == "1" {
			t.Logf("testenv: kept database %s", name)
			return
		}
		db, err := sql.Open("mysql", admin.FormatDSN())
		if err != nil {
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Logf("testenv: drop database %s: %v", name, err)
		}
	})
	cfg := admin.Clone()
	cfg.DBName = name
	return cfg.FormatDSN()
}

// Short reports whether the long variants of tests should be cut down.
func Short() bool { return testing.Short() || strings.EqualFold(os.Getenv("SECKILL_TEST_SHORT"), "1") }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
