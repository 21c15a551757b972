package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// Configuration mistakes of the first hour are refused with what to write
// instead, naming the variable.
func TestConfigErrorsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
		not  []string // never shown: a password
	}{
		{"Redis URL without a scheme", map[string]string{"SECKILL_REDIS_URL": "127.0.0.1:6379"},
			[]string{"SECKILL_REDIS_URL", "redis:// scheme is missing", "redis://127.0.0.1:6379"}, []string{"first path segment"}},
		{"Redis URL without a scheme, with a password", map[string]string{"SECKILL_REDIS_URL": "u:s3cret@10.0.0.1:6379"},
			[]string{"SECKILL_REDIS_URL", "redis:// scheme is missing", "redis://[user:password@]host:port"}, []string{"s3cret"}},
		{"localhost without a scheme", map[string]string{"SECKILL_REDIS_URL": "localhost:6379"},
			[]string{"redis:// scheme is missing", "redis://localhost:6379"}, nil},
		{"MySQL DSN as a URL", map[string]string{"SECKILL_MYSQL_DSN": "mysql://seckill:s3cret@127.0.0.1:3306/seckill"},
			[]string{"SECKILL_MYSQL_DSN", "user:pass@tcp(host:3306)/db?parseTime=true"}, []string{"s3cret", "default addr for network"}},
		{"MySQL DSN without tcp()", map[string]string{"SECKILL_MYSQL_DSN": "seckill:s3cret@127.0.0.1:3306/seckill"},
			[]string{"SECKILL_MYSQL_DSN", "user:pass@tcp(host:3306)/db?parseTime=true"}, []string{"s3cret"}},
		{"a port alone", map[string]string{"SECKILL_HTTP_ADDR": "8080"},
			[]string{`SECKILL_HTTP_ADDR="8080"`, `":8080"`}, nil},
		{"an admin port alone", map[string]string{"SECKILL_ADMIN_ADDR": "9091"},
			[]string{`SECKILL_ADMIN_ADDR="9091"`, `":9091"`}, nil},
		{"held requests below 0", map[string]string{"SECKILL_ROOM_MAX_HELD": "-1"},
			[]string{`SECKILL_ROOM_MAX_HELD="-1"`, "a whole number of held requests"}, nil},
		{"held requests not a number", map[string]string{"SECKILL_ROOM_MAX_HELD": "100k"},
			[]string{`SECKILL_ROOM_MAX_HELD="100k"`, "a whole number of held requests"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return tc.env[k] })
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant it to contain %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%v\nmust not contain %q", err, n)
				}
			}
		})
	}
	for _, ok := range []map[string]string{
		{"SECKILL_MYSQL_DSN": "seckill:seckill@tcp(127.0.0.1:3306)/seckill?parseTime=true"},
		{"SECKILL_MYSQL_DSN": "sqlite:/tmp/x.db"},
		{"SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_ADMIN_ADDR": "[::1]:9091"},
		{"SECKILL_ROOM_MAX_HELD": "0"},
	} {
		if _, err := loadConfig(func(k string) string { return ok[k] }); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
}

// A port another process holds is named as taken, with its variable.
func TestPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := map[string]string{"SECKILL_HTTP_ADDR": taken.Addr().String()}
	err = run(ctx, []string{"seckill", "demo"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SECKILL_HTTP_ADDR") || !strings.Contains(err.Error(), "the port is taken") {
		t.Fatalf("run on a taken port = %v", err)
	}

	env = map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_ADMIN_ADDR": taken.Addr().String()}
	err = run(ctx, []string{"seckill", "demo"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "SECKILL_ADMIN_ADDR") || !strings.Contains(err.Error(), "the port is taken") {
		t.Fatalf("run on a taken admin port = %v", err)
	}
}

// go-redis's own log lines (its pool's dial failures) go into the
// structured log, not as plain text beside it.
func TestRedisClientLogIsStructured(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	env := map[string]string{"SECKILL_REDIS_URL": "redis://" + addr, "SECKILL_MYSQL_DSN": "u:p@tcp(" + addr + ")/seckill", "SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_USERCHECK": "approve-all"}
	var stderr syncBuffer
	if err := run(context.Background(), []string{"seckill", "serve"}, func(k string) string { return env[k] }, io.Discard, &stderr); err == nil {
		t.Fatal("served without Redis")
	}
	// go-redis logs from its pool after the dial failed, maybe after run
	// returned.
	var fromRedis int
	testenv.WaitFor(t, 5*time.Second, "go-redis's line in the JSON log", func() bool { return strings.Contains(stderr.String(), `"msg":"redis client"`) })
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("not a JSON log line: %q", line)
		}
		if v["msg"] == "redis client" {
			fromRedis++
		}
	}
	if fromRedis == 0 {
		t.Fatalf("no go-redis line in the log:\n%s", stderr.String())
	}
}

// A database that does not exist, and an address where nothing answers, are
// named with their variable and what to do.
func TestDatabaseErrorsSayWhatToDo(t *testing.T) {
	t.Run("nothing answers", func(t *testing.T) {
		// Port 1 (tcpmux): nothing listens there. A port picked free and
		// closed again can be taken by another test's server before the
		// service dials it (seen once: "can't parse map reply: HTTP/1.1 400").
		addr := "127.0.0.1:1"
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Fatalf("something listens at %s", addr)
		}
		env := map[string]string{"SECKILL_MYSQL_DSN": "u:p@tcp(" + addr + ")/seckill"}
		err := run(context.Background(), []string{"seckill", "migrate"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "SECKILL_MYSQL_DSN") || !strings.Contains(err.Error(), "nothing answers at "+addr) {
			t.Fatalf("migrate against a closed port = %v", err)
		}
		env = map[string]string{"SECKILL_REDIS_URL": "redis://" + addr, "SECKILL_MYSQL_DSN": "u:p@tcp(" + addr + ")/seckill", "SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_USERCHECK": "approve-all"}
		err = run(context.Background(), []string{"seckill", "serve"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "SECKILL_REDIS_URL") || !strings.Contains(err.Error(), "nothing answers at "+addr) {
			t.Fatalf("serve against a closed Redis port = %v", err)
		}
	})
	t.Run("unknown database", func(t *testing.T) {
		cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.DBName = "seckill_no_such_db_37"
		env := map[string]string{
			"SECKILL_MYSQL_DSN": cfg.FormatDSN(), "SECKILL_REDIS_URL": testenv.RedisURL(t),
			"SECKILL_KEY_PREFIX": testenv.Prefix(t), "SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_USERCHECK": "approve-all",
		}
		err = run(context.Background(), []string{"seckill", "serve"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "SECKILL_MYSQL_DSN") || !strings.Contains(err.Error(), "CREATE DATABASE seckill_no_such_db_37") {
			t.Fatalf("serve on a database that does not exist = %v", err)
		}
	})
	// Can fail: without explainDBErrorOf's 1045 case the error reads
	// "... take migration lock: Error 1045 (28000): Access denied ...".
	t.Run("wrong password", func(t *testing.T) {
		cfg, err := mysql.ParseDSN(testenv.MySQLDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Passwd += "-not-the-password"
		env := map[string]string{
			"SECKILL_MYSQL_DSN": cfg.FormatDSN(), "SECKILL_REDIS_URL": testenv.RedisURL(t),
			"SECKILL_KEY_PREFIX": testenv.Prefix(t), "SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_USERCHECK": "approve-all",
		}
		err = run(context.Background(), []string{"seckill", "serve"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "SECKILL_MYSQL_DSN: the database at "+cfg.Addr+" refused the user") ||
			!strings.Contains(err.Error(), "-u "+cfg.User+" -p") {
			t.Fatalf("serve with a wrong password = %v", err)
		}
	})
}
