package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// runtimeUser returns the DSN of a database user allowed only SELECT,
// INSERT, UPDATE and DELETE on the database of adminDSN, for the test's
// length. scripts/services.sh's test user may not create users (its rights
// end at the seckill_* databases), so it names a user without rights in
// SECKILL_TEST_MYSQL_RUNTIME_USER (name:password), which gets the grant and
// loses it when the test ends; without that variable (root, or a container)
// the user is created here and dropped at the end.
func runtimeUser(t *testing.T, adminDSN string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	user, host, password := "rt_"+cfg.DBName[len(cfg.DBName)-12:], "%", "runtime-pw"
	// In a GRANT a database name is a pattern: _ and % escaped, it names
	// this database alone, which a user whose grant option covers only
	// seckill\_% may grant on (an unescaped seckill_t_... is a wider pattern).
	db := quoteIdent(strings.NewReplacer("_", `\_`, "%", `\%`).Replace(cfg.DBName))
	grant := "GRANT SELECT, INSERT, UPDATE, DELETE ON " + db + ".* TO "
	if named := os.Getenv("SECKILL_TEST_MYSQL_RUNTIME_USER"); named != "" {
		var ok bool
		if user, password, ok = strings.Cut(named, ":"); !ok {
			t.Fatal("SECKILL_TEST_MYSQL_RUNTIME_USER: want name:password")
		}
		host = "127.0.0.1"
		t.Cleanup(func() {
			conn, err := sql.Open("mysql", adminDSN)
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = conn.ExecContext(context.Background(), "REVOKE ALL PRIVILEGES ON "+db+".* FROM '"+user+"'@'"+host+"'")
		})
	} else {
		if _, err := admin.ExecContext(ctx, "CREATE USER '"+user+"'@'%' IDENTIFIED BY '"+password+"'"); err != nil {
			t.Fatalf("create user (a test user that may not, such as scripts/services.sh's, names one in SECKILL_TEST_MYSQL_RUNTIME_USER): %v", err)
		}
		t.Cleanup(func() {
			conn, err := sql.Open("mysql", adminDSN)
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = conn.ExecContext(context.Background(), "DROP USER IF EXISTS '"+user+"'@'%'")
		})
	}
	_, err = admin.ExecContext(ctx, grant+"'"+user+"'@'"+host+"'")
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1044 || me.Number == 1045) {
		t.Skipf("the test database user may not GRANT (give it WITH GRANT OPTION, as scripts/services.sh does): %v", err)
	}
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
	rt := cfg.Clone()
	rt.User, rt.Passwd = user, password
	return rt.FormatDSN()
}

// TestLeastPrivilegeRuntimeUser runs the service's database work as a user
// without DDL rights: a DDL user migrates through SECKILL_MIGRATE_DSN, and
// serve with SECKILL_MIGRATIONS=skip only checks the schema, refusing to
// start while it is behind.
func TestLeastPrivilegeRuntimeUser(t *testing.T) {
	ddlDSN := testenv.MySQLDSN(t)
	rtDSN := runtimeUser(t, ddlDSN)
	env := map[string]string{
		"SECKILL_REDIS_URL":  testenv.RedisURL(t),
		"SECKILL_KEY_PREFIX": testenv.Prefix(t),
		"SECKILL_MYSQL_DSN":  rtDSN,
		"SECKILL_MIGRATIONS": "skip",
	}
	getenv := func(k string) string { return env[k] }
	open := func() error {
		t.Helper()
		cfg, err := loadConfig(getenv)
		if err != nil {
			t.Fatal(err)
		}
		cfg.BooksSweep = 0
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		b, err := openBackend(context.Background(), cfg, usercheck.ApproveAll{}, log, prometheus.NewRegistry())
		if err == nil {
			// The runtime user can do the service's work: write and read.
			now := time.Now()
			var a seckill.Activity
			a, err = b.orders.Activities.CreateActivity(context.Background(), seckill.Activity{Name: "lp", TotalStock: 1, StartsAt: now, EndsAt: now.Add(time.Hour)})
			if err == nil {
				_, err = b.orders.Orders.CountOrders(context.Background(), a.ID)
			}
			_ = b.Close()
		}
		return err
	}

	// Unmigrated: refused, saying what to do.
	err := open()
	if err == nil || !strings.Contains(err.Error(), "run `seckill migrate`") || !strings.Contains(err.Error(), "SECKILL_MIGRATIONS=skip") {
		t.Fatalf("skip on an unmigrated database: open = %v, want a refusal saying to run `seckill migrate`", err)
	}

	// The runtime user alone cannot migrate; through SECKILL_MIGRATE_DSN the
	// DDL user does.
	env["SECKILL_MIGRATE_DSN"] = ddlDSN
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"seckill", "migrate"}, getenv, io.Discard, &stderr); err != nil {
		t.Fatalf("migrate with SECKILL_MIGRATE_DSN: %v\n%s", err, stderr.String())
	}
	if err := open(); err != nil {
		t.Fatalf("skip on a migrated database as the runtime user: %v", err)
	}
}

func TestMigrationsSettingRefused(t *testing.T) {
	for _, v := range []string{"later", "no"} {
		_, err := loadConfig(func(k string) string {
			if k == "SECKILL_MIGRATIONS" {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "SECKILL_MIGRATIONS") {
			t.Errorf("SECKILL_MIGRATIONS=%s: loadConfig = %v, want a refusal naming the variable", v, err)
		}
	}
	for _, v := range []string{"", "apply", "skip", "SKIP"} {
		cfg, err := loadConfig(func(k string) string {
			if k == "SECKILL_MIGRATIONS" {
				return v
			}
			return ""
		})
		if err != nil || cfg.SkipMigrations != strings.EqualFold(v, "skip") {
			t.Errorf("SECKILL_MIGRATIONS=%q: loadConfig = %+v, %v", v, cfg.SkipMigrations, err)
		}
	}
	_, err := loadConfig(func(k string) string {
		if k == "SECKILL_MIGRATE_DSN" {
			return "mysql://u:p@h/db"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "SECKILL_MIGRATE_DSN") {
		t.Errorf("a URL as SECKILL_MIGRATE_DSN: loadConfig = %v, want a refusal naming the variable", err)
	}
}
