package redistopo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startCluster starts the six nodes (those not running), creates the
// Cluster when none of them has a node file yet (otherwise a restarted node
// rejoins by its file, as a replica), and waits until it is whole. The node
// timeout is 2 s, so a killed primary's replica takes over in about 3 s;
// full coverage is not required, so only the dead primary's slots stop
// meanwhile.
func (t *Topology) startCluster() error {
	fresh := true
	for _, n := range t.Data {
		conf := filepath.Join(t.cfg.Dir, fmt.Sprintf("nodes-%d.conf", n.Port))
		if _, err := os.Stat(conf); err == nil {
			fresh = false
		}
		if err := n.start("", "--cluster-enabled", "yes", "--cluster-config-file", conf,
			"--cluster-node-timeout", strconv.FormatInt(NodeTimeout.Milliseconds(), 10), "--cluster-require-full-coverage", "no"); err != nil {
			return err
		}
	}
	if fresh {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		args := append(append([]string{"--cluster", "create"}, addrs(t.Data)...), "--cluster-replicas", "1", "--cluster-yes")
		if out, err := exec.CommandContext(ctx, t.cli(), args...).CombinedOutput(); err != nil {
			return fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
		}
	}
	// A cluster created just now syncs every replica from scratch: on a
	// loaded 2-core machine (a CI run beside two chaos campaigns) that took
	// longer than the 30 s a restarted one is given.
	within := 30 * time.Second
	if fresh {
		within = 90 * time.Second
	}
	return WaitFor(within, "Redis Cluster (every slot served, replicas in sync)", t.clusterOK)
}

// cli is the redis-cli beside the redis-server, or the one on PATH.
func (t *Topology) cli() string {
	cli := filepath.Join(filepath.Dir(t.cfg.Bin), "redis-cli")
	if _, err := os.Stat(cli); err != nil {
		return "redis-cli"
	}
	return cli
}

// clusterOK: every node says the cluster is ok, they all agree on who serves
// which slot (a killed primary restarts believing it still owns its slots
// until gossip tells it otherwise, and a client that asks it meanwhile is
// sent round in MOVED), and each primary has its replica in sync.
func (t *Topology) clusterOK() bool {
	for _, n := range t.Data {
		if state, err := clusterInfo(n.Port); err != nil || !strings.Contains(state, "cluster_state:ok") {
			return false
		}
		rep, err := info(n.Port, "replication")
		if err != nil || (strings.Contains(rep, "role:master") && !strings.Contains(rep, "state=online")) {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, t.cli(), "--cluster", "check", t.Data[0].Addr()).Run() == nil
}

// Primary is a running Cluster node that says it is a primary with a
// replica, or the data node the Sentinels call the primary.
func (t *Topology) Primary() (*Node, error) {
	if t.cfg.Mode == Sentinel {
		return t.sentinelPrimary()
	}
	for _, n := range t.Data {
		if !n.Running() {
			continue
		}
		if rep, err := info(n.Port, "replication"); err == nil && strings.Contains(rep, "role:master") && strings.Contains(rep, "connected_slaves:1") {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no running cluster primary with a replica")
}
