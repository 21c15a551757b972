package testenv

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Galera is a fresh database on the loopback Galera cluster that
// `bash scripts/services.sh galera` starts (scripts/test.sh does): Proxy is
// its DSN through HAProxy (the single writer), Nodes its DSN on each node,
// node 1 first, and Dir the cluster's folder (node N's pid file is
// Dir/nodeN/mysqld.pid). The test skips, saying why, when the cluster is not
// running (SECKILL_TEST_GALERA_DSN unset).
type Galera struct {
	Proxy string
	Nodes []string
	Dir   string
}

// GaleraCluster returns a fresh database on the Galera cluster, dropped when
// the test ends.
func GaleraCluster(t testing.TB) Galera {
	t.Helper()
	dsn, nodes := os.Getenv("SECKILL_TEST_GALERA_DSN"), os.Getenv("SECKILL_TEST_GALERA_NODES")
	if dsn == "" || nodes == "" {
		t.Skip("testenv: no Galera cluster (SECKILL_TEST_GALERA_DSN unset): bash scripts/services.sh galera starts one; scripts/test.sh does")
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("testenv: SECKILL_TEST_GALERA_DSN: %v", err)
	}
	cfg.DBName, cfg.ParseTime = "", true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := "seckill_g_" + randomHex(6)
	// Another package's test may be failing the writer over right now:
	// HAProxy needs about a second to send new connections elsewhere.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"` CHARACTER SET utf8mb4")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: Galera through %s: create database: %v", cfg.Addr, err)
		}
	}
	t.Cleanup(func() {
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`")
	})
	g := Galera{Dir: os.Getenv("SECKILL_TEST_GALERA_DIR")}
	at := func(addr string) string {
		c := cfg.Clone()
		c.Addr, c.DBName = addr, name
		return c.FormatDSN()
	}
	g.Proxy = at(cfg.Addr)
	for _, addr := range strings.Split(nodes, ",") {
		g.Nodes = append(g.Nodes, at(addr))
	}
	return g
}
