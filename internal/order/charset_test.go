package order

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The store interpolates arguments on the client, so a DSN asking for a
// charset where 0x5c can end a character is refused at open, and the
// utf8 family opens as before.
func TestOpenRefusesMultibyteCharsets(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	ctx := context.Background()
	for _, param := range []string{"charset=gbk", "charset=sjis", "charset=utf8mb4,big5", "charset=GB18030",
		"collation=cp932_japanese_ci", "character_set_client=gbk"} {
		s, err := Open(ctx, dsn+"&"+param, Options{})
		if err == nil {
			_ = s.Close()
		}
		if !errors.Is(err, ErrUnsafeCharset) {
			t.Errorf("Open with %s: %v, want ErrUnsafeCharset", param, err)
		}
	}
	for _, param := range []string{"charset=utf8mb4", "charset=utf8", "charset=utf8mb3,utf8mb4", "collation=utf8mb4_unicode_ci"} {
		s, err := Open(ctx, dsn+"&"+param, Options{})
		if err != nil {
			t.Errorf("Open with %s: %v", param, err)
			continue
		}
		_ = s.Close()
	}
}

// What the refusal prevents, on the real MariaDB: a store on a gbk
// connection with interpolation, opened past the guard, sends the name
// "\xbf' ..." escaped as "\xbf\' ...". The server reads 0xbf5c as one gbk
// character, so the quote ends the name's literal and the rest of the name
// is parsed as SQL; here it sets the activity's total stock.
func TestGBKInterpolationInjects(t *testing.T) {
	dsn := testenv.MySQLDSN(t)
	ctx := context.Background()
	safe, err := Open(ctx, dsn, Options{}) // migrates
	if err != nil {
		t.Fatal(err)
	}
	defer safe.Close()
	gbk := dsn + "&charset=gbk"
	if s, err := Open(ctx, gbk, Options{}); !errors.Is(err, ErrUnsafeCharset) {
		if err == nil {
			_ = s.Close()
		}
		t.Fatalf("Open with charset=gbk: %v, want ErrUnsafeCharset", err)
	}
	s := unguardedStore(t, gbk)
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	a := seckill.Activity{Name: "x", TotalStock: 10, StartsAt: start, EndsAt: start.Add(time.Hour)}
	a.Name = injectedName(t, s, a, 999999)
	if _, err := s.Activities.CreateActivity(ctx, a); err != nil {
		t.Fatalf("the injected statement did not run: %v", err)
	}
	id, err := safe.Activities.HighestActivityID(ctx) // the comment also cut RETURNING id
	if err != nil {
		t.Fatal(err)
	}
	stored, err := safe.Activities.Activity(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if stored.TotalStock != 999999 {
		t.Fatalf("stored total %d, name %q: no injection", stored.TotalStock, stored.Name)
	}
	t.Logf("asked for total 10 with a crafted name; the database holds total %d, name %q", stored.TotalStock, stored.Name)
}

// unguardedStore opens a store on dsn as openMySQL does, without the
// charset check.
func unguardedStore(t *testing.T, dsn string) *Store {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ParseTime, cfg.Loc, cfg.InterpolateParams = true, time.UTC, true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { _ = db.Close() })
	gdb, err := gorm.Open(gormmysql.New(gormmysql.Config{Conn: db}), &gorm.Config{SkipDefaultTransaction: true, NowFunc: now})
	if err != nil {
		t.Fatal(err)
	}
	return New(gdb)
}

// injectedName is a name that, once escaped for a gbk connection, closes
// its literal and supplies the row's other values itself, total among them,
// commenting out the values the store sends. Strings go as hex literals: a
// quote in the name would be escaped.
func injectedName(t *testing.T, s *Store, a seckill.Activity, total int64) string {
	t.Helper()
	row := activityRow{Name: a.Name, TotalStock: total, StartsAt: storedTime(a.StartsAt), EndsAt: storedTime(a.EndsAt), CreatedAt: now(),
		Announced: true, PerUserLimit: a.Limit()}
	stmt := s.db.Session(&gorm.Session{DryRun: true}).Create(&row).Statement
	if !strings.HasPrefix(stmt.SQL.String(), "INSERT INTO `activities` (`name`,") {
		t.Fatalf("the insert does not start with the name: %s", stmt.SQL.String())
	}
	vals := make([]string, 0, len(stmt.Vars)-1)
	for _, v := range stmt.Vars[1:] {
		vals = append(vals, sqlLiteral(t, v))
	}
	return "\xbf', " + strings.Join(vals, ", ") + ")#"
}

// sqlLiteral writes v without quotes.
func sqlLiteral(t *testing.T, v any) string {
	t.Helper()
	dv, err := driver.DefaultParameterConverter.ConvertValue(v)
	if valuer, ok := v.(driver.Valuer); ok {
		dv, err = valuer.Value()
	}
	if err != nil {
		t.Fatal(err)
	}
	switch dv := dv.(type) {
	case nil:
		return "NULL"
	case bool:
		if dv {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(dv, 10)
	case string:
		return "0x" + hex.EncodeToString([]byte(dv))
	case []byte:
		return "0x" + hex.EncodeToString(dv)
	case time.Time:
		return "0x" + hex.EncodeToString([]byte(dv.UTC().Format("2006-01-02 15:04:05.000000")))
	}
	t.Fatalf("no literal for %T", dv)
	return ""
}
