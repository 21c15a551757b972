package chaos

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// The Redis modes of a campaign.
const (
	RedisSentinel = redistopo.Sentinel
	RedisCluster  = redistopo.Cluster
)

const sentinelMaster = "chaos"

// redisTopology is a Redis of the campaign's own (redistopo, its nodes this
// process's children on free loopback ports), so killing its primary
// disturbs no other test.
//
// Under Sentinel every data node has a front: clients reach it through a
// toxic proxy (the service-Redis link's toxics), which reaches it through a
// hold (a late-deduct holds the purchase path's deducts there). Each data
// node announces its proxy's port (replica-announce-port) and the Sentinels
// watch the primary through it, so the addresses the Sentinels give the
// service are the proxies': the toxics apply to every data node, before
// and after a failover. A Cluster announces its nodes' own ports (a proxied
// cluster bus would need the bus port announced apart, which redis-cli
// --cluster create does not do): in cluster mode the Redis link has no
// toxics, only the primaries' kills and pauses.
type redisTopology struct {
	*redistopo.Topology
	fronts []front
}

// front is what stands in front of one data node.
type front struct {
	proxy *toxic.Proxy
	hold  *faultproxy.Proxy
}

// startRedis starts the topology of the mode in dir.
func startRedis(mode, bin, dir string) (*redisTopology, error) {
	r := &redisTopology{}
	cfg := redistopo.Config{Mode: mode, Dir: dir, Bin: bin, MasterName: sentinelMaster}
	if mode == RedisSentinel {
		cfg.Announce = r.addFront
	}
	t, err := redistopo.Start(cfg)
	if err != nil {
		r.closeFronts()
		return nil, err
	}
	r.Topology = t
	return r, nil
}

// addFront puts a hold and a toxic proxy in front of the node on port, and
// returns the proxy's port, which the node announces.
func (r *redisTopology) addFront(port int) (int, error) {
	var f front
	var err error
	if f.hold, err = faultproxy.New(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		return 0, err
	}
	f.hold.SetRequestMatch(func() func([]byte) bool { return isDeduct })
	if f.proxy, err = toxic.New(f.hold.Addr()); err != nil {
		_ = f.hold.Close()
		return 0, err
	}
	r.fronts = append(r.fronts, f)
	return strconv.Atoi(f.proxy.Addr()[strings.LastIndex(f.proxy.Addr(), ":")+1:])
}

// proxies are the service-Redis links (none in cluster mode).
func (r *redisTopology) proxies() []*toxic.Proxy {
	var ps []*toxic.Proxy
	for _, f := range r.fronts {
		ps = append(ps, f.proxy)
	}
	return ps
}

// close stops every node and front.
func (r *redisTopology) close() {
	r.Close()
	r.closeFronts()
}

func (r *redisTopology) closeFronts() {
	for _, f := range r.fronts {
		_ = f.proxy.Close()
		_ = f.hold.Close()
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
func (r *redisTopology) setDeductDelay(d time.Duration) {
	for _, f := range r.fronts {
		f.hold.SetRequestDelay(d)
	}
}

// deductsHeld returns how many deducts the nodes' holds have held so far, and
// how many they hold now.
func (r *redisTopology) deductsHeld() (sofar, now int64) {
	for _, f := range r.fronts {
		sofar += f.hold.Held()
		now += f.hold.Holding()
	}
	return sofar, now
}
