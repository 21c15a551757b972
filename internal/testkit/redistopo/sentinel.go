package redistopo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// startSentinel starts the data nodes and Sentinels not running (quorum 2,
// a primary down after 2 s) and waits until the Sentinels name a primary
// with its replica in sync. A data node that is down is started as a
// replica of the primary the Sentinels name; when none runs and no
// Sentinel names one, the Daemon's data is cleared and it starts afresh.
func (t *Topology) startSentinel() error {
	master, _ := t.sentinelPrimary()
	if master == nil && t.cfg.Daemon && !anyRunning(t.Data) && !anyRunning(t.Sentinels) {
		if err := os.RemoveAll(t.cfg.Dir); err != nil {
			return err
		}
		if err := os.MkdirAll(t.cfg.Dir, 0o755); err != nil {
			return err
		}
	}
	if master == nil {
		master = t.Data[0]
	}
	for _, n := range t.Data {
		var args []string
		if n.Announce != n.Port {
			args = append(args, "--replica-announce-ip", "127.0.0.1", "--replica-announce-port", strconv.Itoa(n.Announce))
		}
		if n != master {
			args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
		}
		if err := n.start("", args...); err != nil {
			return err
		}
	}
	for _, s := range t.Sentinels {
		// A Sentinel rewrites its file with what it learns: it is written
		// once, and a restarted Sentinel reads what it knew.
		conf := filepath.Join(t.cfg.Dir, fmt.Sprintf("sentinel-%d.conf", s.Port))
		if _, err := os.Stat(conf); errors.Is(err, os.ErrNotExist) {
			body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %[1]s %[3]d\nsentinel failover-timeout %[1]s 6000\nsentinel parallel-syncs %[1]s 1\n",
				t.cfg.MasterName, master.Announce, NodeTimeout.Milliseconds())
			if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
				return fmt.Errorf("sentinel config: %w", err)
			}
		}
		if err := s.start(conf, "--sentinel"); err != nil {
			return err
		}
	}
	// Sentinels find each other by hellos every 2 s; under -race beside the
	// other packages' failovers that took over 30 s once (CI, TestChaos).
	return WaitFor(60*time.Second, "Sentinel (a primary with its replica in sync)", t.sentinelOK)
}

func anyRunning(nodes []*Node) bool {
	for _, n := range nodes {
		if n.Running() {
			return true
		}
	}
	return false
}

// sentinelOK: a Sentinel names a primary, its replica is in sync, and every
// Sentinel knows that replica and the other Sentinels. A Sentinel learns
// them seconds after it starts (the primary's INFO, the others' hellos);
// before that, a primary killed has no replica to fail over to, nor a
// majority to elect the Sentinel that would.
func (t *Topology) sentinelOK() bool {
	p, err := t.sentinelPrimary()
	if err != nil {
		return false
	}
	rep, err := info(p.Port, "replication")
	if err != nil || !strings.Contains(rep, "role:master") || !strings.Contains(rep, "state=online") {
		return false
	}
	for _, s := range t.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := c.Master(ctx, t.cfg.MasterName).Result()
		cancel()
		_ = c.Close()
		if err != nil || m["num-slaves"] == "0" || m["num-other-sentinels"] != strconv.Itoa(len(t.Sentinels)-1) {
			return false
		}
	}
	return true
}

// sentinelPrimary is the data node the first Sentinel that answers names
// as the primary (by the port it announces).
func (t *Topology) sentinelPrimary() (*Node, error) {
	for _, s := range t.Sentinels {
		if !portTaken(s.Port) {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		addr, err := c.GetMasterAddrByName(ctx, t.cfg.MasterName).Result()
		cancel()
		_ = c.Close()
		if err != nil || len(addr) != 2 {
			continue
		}
		for _, n := range t.Data {
			if addr[1] == strconv.Itoa(n.Announce) {
				return n, nil
			}
		}
	}
	return nil, errors.New("no Sentinel names a primary")
}

// Restart starts a killed data node again, empty (no persistence): under
// Sentinel as a replica of the primary the Sentinels name once they have
// failed over (waiting up to 30 s for that), in a Cluster with its node
// file, which makes it rejoin as a replica.
func (t *Topology) Restart(n *Node) error {
	if n.Running() {
		return nil
	}
	if t.cfg.Mode != Sentinel {
		// A Cluster primary restarted before its replica took over comes
		// back empty (these nodes keep nothing on disk) and still owning its
		// slots; its replica then copies the empty data set, and every write
		// the shard acknowledged is lost, WAIT or not (sent order events
		// among them, which nothing sends again). So, as under Sentinel, the node
		// starts again only once its replica serves its slots (or 30 s
		// passed: a replica that cannot take over leaves nothing to keep).
		_ = WaitFor(30*time.Second, "the killed primary's replica to take over", func() bool { return !t.followed(n) })
		return n.Restart(0)
	}
	var p *Node
	err := WaitFor(30*time.Second, "a failover away from the killed primary", func() bool {
		q, err := t.sentinelPrimary()
		if err == nil && q != n {
			p = q
			return true
		}
		return false
	})
	if err != nil {
		return err
	}
	return n.Restart(p.Port)
}

// followed reports whether a running node still replicates n: its replica
// has not been promoted yet.
func (t *Topology) followed(n *Node) bool {
	for _, m := range t.Data {
		if m == n || !m.Running() {
			continue
		}
		rep, err := info(m.Port, "replication")
		if err != nil || strings.Contains(rep, "role:slave") && strings.Contains(rep, fmt.Sprintf("master_port:%d\r\n", n.Port)) {
			return true
		}
	}
	return false
}
