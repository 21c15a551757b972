package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Galera is the order store's Galera cluster behind HAProxy, as
// scripts/services.sh galera runs it (SECKILL_TEST_GALERA_*): DSN through
// HAProxy without a database, the nodes' SQL addresses, node 1 first, and
// the cluster's folder (node N's pid file is Dir/nodeN/mysqld.pid).
type Galera struct {
	DSN   string
	Nodes []string
	Dir   string
	// Killable are the nodes (1-based) the campaign may SIGKILL: a cluster
	// that other tests use at the same time offers only node 1, the writer,
	// which the Galera failover tests kill too.
	Killable []int
	// Restart brings every killed node back and returns once the cluster
	// is Synced (bash scripts/services.sh galera, with the cluster's
	// environment).
	Restart func(ctx context.Context) error
}

// GaleraFromEnv reads the cluster from SECKILL_TEST_GALERA_DSN, _NODES and
// _DIR (nil when they are unset), restarted with scripts/services.sh from
// repo.
func GaleraFromEnv(repo string, killable []int) *Galera {
	dsn, nodes, dir := os.Getenv("SECKILL_TEST_GALERA_DSN"), os.Getenv("SECKILL_TEST_GALERA_NODES"), os.Getenv("SECKILL_TEST_GALERA_DIR")
	if dsn == "" || nodes == "" || dir == "" {
		return nil
	}
	g := &Galera{DSN: dsn, Nodes: strings.Split(nodes, ","), Dir: dir, Killable: killable}
	g.Restart = func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts", "services.sh"), "galera")
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("restart Galera: %w\n%s", err, out)
		}
		return nil
	}
	return g
}

// nodePID is the process id of node n (1-based), from its pid file.
func (g *Galera) nodePID(n int) (int, error) {
	raw, err := os.ReadFile(filepath.Join(g.Dir, fmt.Sprintf("node%d", n), "mysqld.pid"))
	if err != nil {
		return 0, fmt.Errorf("galera node %d pid: %w", n, err)
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

// restart runs Restart until it succeeds or within passes.
func (g *Galera) restart(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Until(deadline))
		err := g.Restart(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}

func (g *Galera) killNode(n int) error {
	pid, err := g.nodePID(n)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill galera node %d: %w", n, err)
	}
	return nil
}

// database is the campaign's own database on the order store.
type database struct {
	admin string // DSN without a database
	name  string
	dsn   string // DSN of the database, for the service and the checker
	// causal makes the checker's reads wait for what the cluster committed
	// (Galera's wsrep_sync_wait); plain MariaDB has no such variable.
	causal bool
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createDatabase makes a fresh database on the server of adminDSN.
func createDatabase(adminDSN string, causal bool) (*database, error) {
	cfg, err := mysql.ParseDSN(adminDSN)
	if err != nil {
		return nil, fmt.Errorf("chaos: DSN: %w", err)
	}
	cfg.DBName, cfg.ParseTime = "", true
	d := &database{admin: cfg.FormatDSN(), name: "seckill_chaos_" + randomHex(5), causal: causal}
	db, err := sql.Open("mysql", d.admin)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	defer db.Close()
	// A writer failover of another test may be running, or HAProxy still
	// bringing its servers up: retry a while.
	err = waitFor(3*time.Minute, "create the campaign's database", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+d.name+"` CHARACTER SET utf8mb4")
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	cfg.DBName = d.name
	d.dsn = cfg.FormatDSN()
	return d, nil
}

// at is the database's DSN with another address (a proxy's).
func (d *database) at(addr string) string {
	cfg, _ := mysql.ParseDSN(d.dsn)
	cfg.Addr = addr
	return cfg.FormatDSN()
}

func (d *database) addr() string {
	cfg, _ := mysql.ParseDSN(d.dsn)
	return cfg.Addr
}

func (d *database) drop() {
	db, err := sql.Open("mysql", d.admin)
	if err != nil {
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+d.name+"`")
}

// commitHold chooses the COMMITs a late-commit holds: every one, or only
// those of transactions that changed an order's status (a payment
// verification's, and nothing of a purchase batch's).
type commitHold struct {
	statusOnly atomic.Bool
}

// newMatch is the database link's per-connection match (faultproxy
// SetRequestMatch): it follows the connection's transaction, and says which
// COMMIT to hold. The service interpolates its parameters, so every
// statement arrives as the text of a COM_QUERY.
func (h *commitHold) newMatch() func([]byte) bool {
	changedStatus := false
	return func(b []byte) bool {
		q, ok := mysqlQuery(b)
		if !ok {
			return false
		}
		switch {
		case strings.EqualFold(q, "COMMIT"):
			hold := changedStatus || !h.statusOnly.Load()
			changedStatus = false
			return hold
		case strings.EqualFold(q, "ROLLBACK"):
			changedStatus = false
		case hasPrefixFold(q, "UPDATE orders SET status"):
			changedStatus = true
		}
		return false
	}
}

// mysqlQuery returns the statement of b when b is one whole MySQL COM_QUERY
// packet: a 3-byte little-endian length, a sequence number, the command
// byte 0x03, then the statement. The driver sends one packet per write and
// waits for its reply, so a packet arrives as one chunk.
func mysqlQuery(b []byte) (string, bool) {
	const header = 4
	if len(b) < header+1 || b[header] != 0x03 {
		return "", false
	}
	n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	if n != len(b)-header {
		return "", false
	}
	return strings.TrimSpace(string(b[header+1:])), true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
