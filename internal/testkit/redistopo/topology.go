// Package redistopo starts the Redis topologies the tests run on, from the
// redis-server binary, on loopback: a 3-primary/3-replica Cluster, or a
// primary and its replica under three Sentinels. It is the one starter: the
// scale-out tests and the load tests run theirs as daemons on fixed ports
// (cmd/redistopo, which scripts/services.sh runs), the fault campaign its
// own as child processes on free ports, behind its proxies.
package redistopo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The modes.
const (
	Cluster  = "cluster"
	Sentinel = "sentinel"
)

// NodeTimeout is how long a primary may be silent before a failover starts:
// the Cluster's node timeout, the Sentinels' down-after. A killed primary's
// replica takes over about a second after it.
const NodeTimeout = 2 * time.Second

// Config says which topology to start, and how.
type Config struct {
	Mode string // Cluster or Sentinel
	Dir  string // the nodes' data, configuration and logs
	Bin  string // redis-server; "": found on PATH
	// Ports are the data nodes' ports (6 for a Cluster, 2 for Sentinel),
	// then the Sentinels' (3); nil: free ports.
	Ports []int
	// Daemon starts the nodes as daemons that outlive this process, and
	// makes Start idempotent: running nodes are left alone, a node that is
	// down is started again (under Sentinel as a replica of the primary
	// the Sentinels name), and a topology that cannot be made whole is
	// built afresh, once. Otherwise the nodes are this process's children,
	// stopped by Close, and Dir starts empty.
	Daemon bool
	// MasterName is the Sentinels' name of the primary; "": "seckill".
	MasterName string
	// Announce returns the port a Sentinel data node announces, which the
	// Sentinels then give clients, instead of its own: a proxy in front of
	// it. nil: its own.
	Announce func(port int) (int, error)
}

// Topology is a started topology.
type Topology struct {
	cfg       Config
	Data      []*Node // the data nodes
	Sentinels []*Node // the Sentinels (none in a Cluster)
}

// Start starts the topology cfg describes and waits until it is whole: every
// slot served with each primary's replica in sync (Cluster), or a primary
// with its replica in sync that the Sentinels agree on.
func Start(cfg Config) (*Topology, error) {
	if cfg.Bin == "" {
		cfg.Bin = "redis-server"
	}
	if cfg.MasterName == "" {
		cfg.MasterName = "seckill"
	}
	t := &Topology{cfg: cfg}
	if err := t.nodes(); err != nil {
		return nil, err
	}
	err := t.start()
	if err != nil && cfg.Daemon {
		// A topology left by an earlier run (nodes killed, paused or
		// restarted by tests; a machine restarted with its node files still
		// there) may never be whole again. The tests need a whole one.
		fmt.Fprintf(os.Stderr, "redistopo: the %s left by an earlier run is not whole (%v): building it afresh\n", cfg.Mode, err)
		if err = t.Stop(); err == nil {
			err = t.start()
		}
	}
	if err != nil {
		if !cfg.Daemon {
			t.Close()
		}
		return nil, fmt.Errorf("redistopo: %s: %w", cfg.Mode, err)
	}
	return t, nil
}

// nodes makes the topology's nodes, on cfg.Ports or free ones.
func (t *Topology) nodes() error {
	data, sentinels := 6, 0
	switch t.cfg.Mode {
	case Cluster:
	case Sentinel:
		data, sentinels = 2, 3
	default:
		return fmt.Errorf("redistopo: unknown mode %q (cluster or sentinel)", t.cfg.Mode)
	}
	ports := t.cfg.Ports
	if ports == nil {
		for range data + sentinels {
			p, err := FreePort()
			if err != nil {
				return err
			}
			ports = append(ports, p)
		}
	}
	if len(ports) != data+sentinels {
		return fmt.Errorf("redistopo: a %s takes %d ports, not %d", t.cfg.Mode, data+sentinels, len(ports))
	}
	for i, p := range ports {
		n := &Node{Port: p, Announce: p, dir: t.cfg.Dir, bin: t.cfg.Bin, daemon: t.cfg.Daemon}
		if i < data {
			if t.cfg.Announce != nil && t.cfg.Mode == Sentinel {
				a, err := t.cfg.Announce(p)
				if err != nil {
					return err
				}
				n.Announce = a
			}
			t.Data = append(t.Data, n)
		} else {
			t.Sentinels = append(t.Sentinels, n)
		}
	}
	return nil
}

func (t *Topology) start() error {
	if err := os.MkdirAll(t.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if t.cfg.Mode == Cluster {
		return t.startCluster()
	}
	return t.startSentinel()
}

// URL is the service's SECKILL_REDIS_URL for the topology (with
// SECKILL_REDIS_MODE its mode).
func (t *Topology) URL() string {
	nodes := t.Data
	q := []string{}
	if t.cfg.Mode == Sentinel {
		nodes = t.Sentinels
		q = append(q, "master_name="+t.cfg.MasterName)
	}
	for _, n := range nodes[1:] {
		q = append(q, "addr="+n.Addr())
	}
	return "redis://" + nodes[0].Addr() + "?" + strings.Join(q, "&")
}

// Client is a client of the topology.
func (t *Topology) Client() redis.UniversalClient {
	if t.cfg.Mode == Sentinel {
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: t.cfg.MasterName, SentinelAddrs: addrs(t.Sentinels)})
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs(t.Data), ClusterStateReloadInterval: time.Second})
}

// Settled reports whether the topology is whole again: every node answers
// and the primaries have their replicas in sync.
func (t *Topology) Settled() bool {
	for _, n := range t.all() {
		if !n.Running() {
			return false
		}
	}
	if t.cfg.Mode == Cluster {
		return t.clusterOK()
	}
	return t.sentinelOK()
}

// Close stops the nodes this process started as its children (SIGCONT
// first, for a paused one); daemons run on.
func (t *Topology) Close() {
	for _, n := range t.all() {
		if n.cmd != nil {
			n.Signal(sigCont)
			n.Kill()
		}
	}
}

// Stop stops every node of the topology, daemons too, a paused one included,
// waits until their ports are free, and removes Dir.
func (t *Topology) Stop() error {
	var errs []error
	for _, n := range t.all() {
		errs = append(errs, n.stop())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(t.cfg.Dir)
}

func (t *Topology) all() []*Node { return append(append([]*Node{}, t.Data...), t.Sentinels...) }

func addrs(nodes []*Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Addr()
	}
	return out
}

// WaitFor polls ok every 100 ms until it holds or within has passed; what
// names the wait in the error.
func WaitFor(within time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not ready within %v", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// info is a node's INFO section, asked within 2 s (a paused node answers
// nothing).
func info(port int, section string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Info(ctx, section).Result()
}

// clusterInfo is a node's CLUSTER INFO, asked within 2 s.
func clusterInfo(port int) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.ClusterInfo(ctx).Result()
}

// StopDaemons stops the daemons of the topology cfg describes (on
// cfg.Ports), whatever their state, and removes cfg.Dir.
func StopDaemons(cfg Config) error {
	cfg.Daemon = true
	t := &Topology{cfg: cfg}
	if err := t.nodes(); err != nil {
		return err
	}
	return t.Stop()
}
