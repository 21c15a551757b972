package testenv_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestServersAnswer(t *testing.T) {
	rdb := testenv.Redis(t)
	p := testenv.Prefix(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, p+"k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", testenv.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
