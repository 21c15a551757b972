package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// The Redis modes of a campaign.
const (
	RedisSentinel = "sentinel"
	RedisCluster  = "cluster"
)

const sentinelMaster = "chaos"

// redisNode is one redis-server process the campaign started.
type redisNode struct {
	port  int
	proxy *toxic.Proxy // clients reach the node here (nil: directly)
	// hold is between proxy and the node: a late-deduct holds the
	// purchase path's deducts in it.
	hold *faultproxy.Proxy
	cmd  *exec.Cmd
	done chan struct{}
	args []string
}

// addr is where clients reach the node.
func (n *redisNode) addr() string {
	if n.proxy != nil {
		return n.proxy.Addr()
	}
	return fmt.Sprintf("127.0.0.1:%d", n.port)
}

// redisTopology is a Redis of the campaign's own: a primary and a replica
// under three Sentinels, or a 3-primary/3-replica Cluster, on free loopback
// ports, so killing its primary disturbs no other test.
//
// Under Sentinel every data node announces its proxy's port
// (replica-announce-port) and the Sentinels watch the primary through its
// proxy, so the addresses the Sentinels give the service are the proxies':
// the service-Redis link's toxics apply to every data node, before and after
// a failover. A Cluster announces its nodes' own ports (a proxied cluster
// bus would need the bus port announced apart, which redis-cli --cluster
// create does not do): in cluster mode the Redis link has no toxics, only
// the primaries' kills and pauses.
type redisTopology struct {
	mode      string
	dir       string
	bin       string
	data      []*redisNode
	sentinels []*redisNode
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (t *redisTopology) start(n *redisNode) error {
	n.cmd = exec.Command(t.bin, n.args...)
	logf, err := os.OpenFile(filepath.Join(t.dir, fmt.Sprintf("redis-%d.log", n.port)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("redis log: %w", err)
	}
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start redis-server on %d: %w", n.port, err)
	}
	n.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}(n.cmd, n.done)
	return waitFor(10*time.Second, fmt.Sprintf("redis-server on %d", n.port), func() bool {
		c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", n.port), DialTimeout: time.Second})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Ping(ctx).Err() == nil
	})
}

func waitFor(within time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not ready within %v", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func newRedisNode(dir string, proxied bool, extra ...string) (*redisNode, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	n := &redisNode{port: port}
	if proxied {
		if n.hold, err = faultproxy.New(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
			return nil, err
		}
		n.hold.SetRequestMatch(func() func([]byte) bool { return isDeduct })
		if n.proxy, err = toxic.New(n.hold.Addr()); err != nil {
			_ = n.hold.Close()
			return nil, err
		}
	}
	n.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	return n, nil
}

// startRedis starts the topology of the mode in dir.
func startRedis(mode, bin, dir string) (t *redisTopology, err error) {
	t = &redisTopology{mode: mode, dir: dir, bin: bin}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	switch mode {
	case RedisSentinel:
		err = t.startSentinel()
	case RedisCluster:
		err = t.startCluster()
	default:
		err = fmt.Errorf("chaos: unknown Redis mode %q (sentinel or cluster)", mode)
	}
	return t, err
}

func (t *redisTopology) startSentinel() error {
	for i := range 2 {
		n, err := newRedisNode(t.dir, true)
		if err != nil {
			return err
		}
		n.args = append(n.args, "--replica-announce-ip", "127.0.0.1", "--replica-announce-port", strings.Split(n.proxy.Addr(), ":")[1])
		if i == 1 {
			n.args = append(n.args, "--replicaof", "127.0.0.1", strconv.Itoa(t.data[0].port))
		}
		t.data = append(t.data, n)
		if err := t.start(n); err != nil {
			return err
		}
	}
	for range 3 {
		n, err := newRedisNode(t.dir, false)
		if err != nil {
			return err
		}
		conf := filepath.Join(t.dir, fmt.Sprintf("sentinel-%d.conf", n.port))
		body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %s 2\nsentinel down-after-milliseconds %[1]s 2000\nsentinel failover-timeout %[1]s 6000\nsentinel parallel-syncs %[1]s 1\n",
			sentinelMaster, strings.Split(t.data[0].proxy.Addr(), ":")[1])
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			return fmt.Errorf("sentinel config: %w", err)
		}
		n.args = append([]string{conf, "--sentinel"}, n.args...)
		t.sentinels = append(t.sentinels, n)
		if err := t.start(n); err != nil {
			return err
		}
	}
	return waitFor(30*time.Second, "Sentinel primary with its replica", func() bool {
		p, err := t.primary()
		if err != nil {
			return false
		}
		info, err := t.info(p)
		return err == nil && strings.Contains(info, "state=online")
	})
}

func (t *redisTopology) startCluster() error {
	var addrs []string
	for range 6 {
		n, err := newRedisNode(t.dir, false)
		if err != nil {
			return err
		}
		n.args = append(n.args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.dir, fmt.Sprintf("nodes-%d.conf", n.port)),
			"--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "no")
		t.data = append(t.data, n)
		if err := t.start(n); err != nil {
			return err
		}
		addrs = append(addrs, n.addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := filepath.Join(filepath.Dir(t.bin), "redis-cli")
	if _, err := os.Stat(cli); err != nil {
		cli = "redis-cli"
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	return waitFor(30*time.Second, "Redis Cluster", t.clusterOK)
}

// clusterOK: every slot served and each primary has its replica online.
func (t *redisTopology) clusterOK() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, n := range t.data {
		c := redis.NewClient(&redis.Options{Addr: n.addr()})
		info, err := c.ClusterInfo(ctx).Result()
		rep, err2 := c.Info(ctx, "replication").Result()
		_ = c.Close()
		if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
		if strings.Contains(rep, "role:master") && !strings.Contains(rep, "state=online") {
			return false
		}
	}
	return true
}

// URL is the service's SECKILL_REDIS_URL (with SECKILL_REDIS_MODE = mode).
func (t *redisTopology) URL() string {
	if t.mode == RedisSentinel {
		q := "master_name=" + sentinelMaster
		for _, s := range t.sentinels[1:] {
			q += "&addr=" + s.addr()
		}
		return "redis://" + t.sentinels[0].addr() + "?" + q
	}
	var q []string
	for _, n := range t.data[1:] {
		q = append(q, "addr="+n.addr())
	}
	return "redis://" + t.data[0].addr() + "?" + strings.Join(q, "&")
}

// Client is a client of the topology for the checker.
func (t *redisTopology) Client() redis.UniversalClient {
	if t.mode == RedisSentinel {
		var addrs []string
		for _, s := range t.sentinels {
			addrs = append(addrs, s.addr())
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: sentinelMaster, SentinelAddrs: addrs})
	}
	var addrs []string
	for _, n := range t.data {
		addrs = append(addrs, n.addr())
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: time.Second})
}

// proxies are the service-Redis links (none in cluster mode).
func (t *redisTopology) proxies() []*toxic.Proxy {
	var ps []*toxic.Proxy
	for _, n := range t.data {
		if n.proxy != nil {
			ps = append(ps, n.proxy)
		}
	}
	return ps
}

func (t *redisTopology) info(n *redisNode) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", n.port), DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Info(ctx, "replication").Result()
}

// primary is the data node the Sentinels call the primary (Sentinel), or a
// node that says it is a primary and runs (Cluster).
func (t *redisTopology) primary() (*redisNode, error) {
	if t.mode == RedisSentinel {
		for _, s := range t.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: s.addr(), DialTimeout: time.Second, ReadTimeout: time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			addr, err := c.GetMasterAddrByName(ctx, sentinelMaster).Result()
			cancel()
			_ = c.Close()
			if err != nil || len(addr) != 2 {
				continue
			}
			for _, n := range t.data {
				if n.addr() == addr[0]+":"+addr[1] {
					return n, nil
				}
			}
		}
		return nil, errors.New("no Sentinel names a primary")
	}
	for _, n := range t.data {
		if !n.running() {
			continue
		}
		if info, err := t.info(n); err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "connected_slaves:1") {
			return n, nil
		}
	}
	return nil, errors.New("no running cluster primary with a replica")
}

func (n *redisNode) running() bool {
	select {
	case <-n.done:
		return false
	default:
		return n.cmd != nil
	}
}

// kill SIGKILLs the node and waits for it to exit.
func (n *redisNode) kill() {
	if n.running() {
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

func (n *redisNode) signal(sig syscall.Signal) {
	if n.running() {
		_ = n.cmd.Process.Signal(sig)
	}
}

// restart starts a killed data node again, empty (no persistence): under
// Sentinel as a replica of the primary the Sentinels name once they have
// failed over (waiting up to 30 s for that), in a Cluster with its node file,
// which makes it rejoin as a replica.
func (t *redisTopology) restart(n *redisNode) error {
	if n.running() {
		return nil
	}
	args := n.args
	if t.mode == RedisSentinel {
		var p *redisNode
		err := waitFor(30*time.Second, "a failover away from the killed primary", func() bool {
			q, err := t.primary()
			if err == nil && q != n {
				p = q
				return true
			}
			return false
		})
		if err != nil {
			return err
		}
		args = append(withoutReplicaOf(args), "--replicaof", "127.0.0.1", strconv.Itoa(p.port))
	}
	saved := n.args
	n.args = args
	err := t.start(n)
	n.args = saved
	return err
}

func withoutReplicaOf(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--replicaof" {
			i += 2
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// settled reports whether the topology is whole again: every node runs and
// the primary has its replica online.
func (t *redisTopology) settled() bool {
	for _, n := range append(append([]*redisNode{}, t.data...), t.sentinels...) {
		if !n.running() {
			return false
		}
	}
	if t.mode == RedisCluster {
		return t.clusterOK()
	}
	p, err := t.primary()
	if err != nil {
		return false
	}
	info, err := t.info(p)
	return err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "state=online")
}

// close stops every node (SIGCONT first, for a paused one) and proxy.
func (t *redisTopology) close() {
	for _, n := range append(append([]*redisNode{}, t.sentinels...), t.data...) {
		n.signal(syscall.SIGCONT)
		n.kill()
		if n.proxy != nil {
			_ = n.proxy.Close()
		}
		if n.hold != nil {
			_ = n.hold.Close()
		}
	}
}

// isDeduct says whether a command the service sent is a purchase batch's
// deduct (internal/stock deduct.lua, by EVALSHA or EVAL): the only script
// whose keys are a grant's receipt and the activity's buyer set. go-redis
// writes each command whole, in one write, so a command is one chunk.
func isDeduct(b []byte) bool {
	return bytes.Contains(b, []byte("}:deduct:")) && bytes.Contains(b, []byte("}:buyers"))
}

// setDeductDelay holds the deducts sent to any data node from now on by d
// (0: they pass again; those held keep their delay).
func (t *redisTopology) setDeductDelay(d time.Duration) {
	for _, n := range t.data {
		if n.hold != nil {
			n.hold.SetRequestDelay(d)
		}
	}
}

// deductsHeld returns how many deducts the nodes' holds have held so far, and
// how many they hold now.
func (t *redisTopology) deductsHeld() (sofar, now int64) {
	for _, n := range t.data {
		if n.hold != nil {
			sofar += n.hold.Held()
			now += n.hold.Holding()
		}
	}
	return sofar, now
}
