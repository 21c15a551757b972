package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
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
	err = redistopo.WaitFor(3*time.Minute, "create the campaign's database", func() bool {
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
	// delay is the late-status-commit's hold; held, when set, is told of
	// each expiry's COMMIT it holds, with the activity whose row that
	// transaction keeps until the COMMIT lands.
	delay atomic.Int64
	held  atomic.Pointer[func(activity int64, d time.Duration)]
	// unread counts the give-back statements the match could not read.
	unread     atomic.Int64
	lastUnread atomic.Pointer[string]
}

// newMatch is the database link's per-connection match (faultproxy
// SetRequestMatch): it follows the connection's transaction, and says which
// COMMIT to hold. The service interpolates its parameters, so every
// statement arrives as the text of a COM_QUERY.
func (h *commitHold) newMatch() func([]byte) bool {
	changedStatus := false
	var gaveBack int64 // the activity whose unit an expiry gave back
	return func(b []byte) bool {
		q, ok := mysqlQuery(b)
		if !ok {
			return false
		}
		switch {
		case strings.EqualFold(q, "COMMIT"):
			statusOnly := h.statusOnly.Load()
			hold := changedStatus || !statusOnly
			if f := h.held.Load(); hold && statusOnly && gaveBack != 0 && f != nil {
				(*f)(gaveBack, time.Duration(h.delay.Load()))
			}
			changedStatus, gaveBack = false, 0
			return hold
		case strings.EqualFold(q, "ROLLBACK"):
			changedStatus, gaveBack = false, 0
		case hasPrefixFold(q, "UPDATE orders SET status"):
			changedStatus = true
		case changedStatus && hasPrefixFold(q, "UPDATE activities SET sold"):
			if act, ok := gaveBackActivity(q); ok {
				gaveBack = act
			} else {
				// The kit no longer reads the service's statement: the
				// late-status-commit would hold expiries it cannot account.
				h.unread.Add(1)
				h.lastUnread.Store(&q)
			}
		}
		return false
	}
}

// giveBack matches an expiry's statement that takes its order's units off
// the activity's sold count (order/status.go giveUnitsBack), as the driver
// interpolates it: the activity's id follows the subquery. The expiry's
// transaction holds that activity's row until it ends.
var giveBack = regexp.MustCompile(`(?is)^UPDATE activities SET sold = sold - \(SELECT quantity FROM orders WHERE id = '[^']*'\)\s+WHERE id = (\d+)\b`)

// gaveBackActivity returns the activity of an expiry's give-back statement.
func gaveBackActivity(q string) (int64, bool) {
	m := giveBack.FindStringSubmatch(q)
	if m == nil {
		return 0, false
	}
	act, err := strconv.ParseInt(m[1], 10, 64)
	return act, err == nil
}

// Unread is an error when the database link saw a status change's
// give-back statement it could not read (how many, and the last one): the
// late-status-commit's accounting of the rows it holds would be silently
// off, so the campaign fails instead.
func (h *commitHold) Unread() error {
	n := h.unread.Load()
	if n == 0 {
		return nil
	}
	q := ""
	if p := h.lastUnread.Load(); p != nil {
		q = *p
	}
	return fmt.Errorf("chaos: the database link read %d give-back statements it does not understand (the last: %.200q); a late-status-commit's holds are not accounted", n, q)
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

// rowHolder is the hold-row fault's outside client: its own connection to
// the campaign's order database (the server the instances write to, past
// their link and its faults), on which a transaction holds one activity's
// row.
type rowHolder struct {
	db *sql.DB

	mu sync.Mutex
	tx *sql.Tx
}

func newRowHolder(dsn string) (*rowHolder, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	db.SetMaxOpenConns(2)
	return &rowHolder{db: db}, nil
}

// hold locks the activity's row in a transaction of its own, and returns
// once the row is locked; release rolls the transaction back. The primary
// key forced: a scan would lock other activities' rows too.
func (r *rowHolder) hold(activity int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tx != nil {
		return errors.New("a row is held already")
	}
	// Begun on a context that does not end: database/sql rolls a
	// transaction back when its BeginTx context ends.
	tx, err := r.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("hold the row of activity %d: %w", activity, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id FROM activities FORCE INDEX (PRIMARY) WHERE id = ? FOR UPDATE", activity).Scan(&id); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("hold the row of activity %d: %w", activity, err)
	}
	r.tx = tx
	return nil
}

func (r *rowHolder) release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tx == nil {
		return nil
	}
	err := r.tx.Rollback()
	r.tx = nil
	return err
}

func (r *rowHolder) close() {
	_ = r.release()
	_ = r.db.Close()
}
