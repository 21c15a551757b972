package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
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

// WaitSynced waits, up to a minute, until each of the nodes (indexes into
// Nodes) is Synced in a cluster of all of them and holds the test's
// database, and returns the cluster's configuration id as the first of them
// reports it. Another package's test may be killing or restarting nodes
// meanwhile: a test that needs two nodes in one cluster waits for it, and can
// tell by the id whether the cluster changed while it ran (ConfID).
func (g Galera) WaitSynced(t testing.TB, nodes ...int) (confID int64) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if confID, last = g.synced(nodes); last == nil {
			return confID
		}
	}
	t.Fatalf("testenv: Galera nodes %v not synced within a minute: %v", nodes, last)
	return 0
}

// ConfID returns the cluster's configuration id as node reports it; it
// changes whenever a node leaves or joins.
func (g Galera) ConfID(t testing.TB, node int) int64 {
	t.Helper()
	id, _, err := g.status(g.Nodes[node])
	if err != nil {
		t.Fatalf("testenv: Galera node %d: %v", node, err)
	}
	return id
}

func (g Galera) synced(nodes []int) (confID int64, err error) {
	for i, n := range nodes {
		id, ok, err := g.status(g.Nodes[n])
		switch {
		case err != nil:
			return 0, fmt.Errorf("node %d: %w", n, err)
		case !ok:
			return 0, fmt.Errorf("node %d: not synced in a cluster of %d, or without the test's database", n, len(g.Nodes))
		case i > 0 && id != confID:
			return 0, fmt.Errorf("node %d: in configuration %d, node %d in %d", n, id, nodes[0], confID)
		}
		confID = id
	}
	return confID, nil
}

// status reads the node's cluster configuration id, and whether it is
// Synced in a cluster of every node and holds the DSN's database.
func (g Galera) status(dsn string) (confID int64, ok bool, err error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return 0, false, err
	}
	name := cfg.DBName
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return 0, false, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	vars := map[string]string{}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_conf_id', 'wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_cluster_status')")
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return 0, false, err
		}
		vars[k] = v
	}
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	var schema string
	err = db.QueryRowContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&schema)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	confID, _ = strconv.ParseInt(vars["wsrep_cluster_conf_id"], 10, 64)
	ok = err == nil && vars["wsrep_local_state_comment"] == "Synced" && vars["wsrep_cluster_status"] == "Primary" &&
		vars["wsrep_cluster_size"] == strconv.Itoa(len(g.Nodes))
	return confID, ok, nil
}
