package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis topologies of SECKILL_REDIS_MODE.
const (
	redisSingle   = "single"
	redisCluster  = "cluster"
	redisSentinel = "sentinel"
)

// clusterReload is how often the cluster client reloads its slot map while
// commands flow. go-redis reloads on MOVED/ASK/READONLY replies only and
// otherwise every 60 s; a primary that died answers nothing, so without
// this the client would keep sending the slot's commands to the dead node
// for up to a minute after its replica took over. One CLUSTER SLOTS a second
// per instance is nothing next to a sale.
const clusterReload = time.Second

// redisTopology is a parsed SECKILL_REDIS_URL: exactly one of the three
// option sets, for the mode.
type redisTopology struct {
	mode     string
	single   *redis.Options
	cluster  *redis.ClusterOptions
	failover *redis.FailoverOptions
}

// parseRedis reads rawURL with go-redis's parser for mode: redis.ParseURL,
// redis.ParseClusterURL (redis://h1:p1?addr=h2:p2&addr=h3:p3) or
// redis.ParseFailoverURL (redis://s1:p1?master_name=NAME&addr=s2:p2, the
// addresses being Sentinels'). The URL's query parameters (pool_size,
// read_timeout...) win over the defaults set here.
func parseRedis(mode, rawURL string) (redisTopology, error) {
	t := redisTopology{mode: mode}
	if mode == redisSingle || mode == redisCluster || mode == redisSentinel {
		if err := checkRedisScheme(mode, rawURL); err != nil {
			return t, err
		}
	}
	var err error
	switch mode {
	case redisSingle:
		if t.single, err = redis.ParseURL(rawURL); err == nil {
			o := t.single
			defaults(&o.ContextTimeoutEnabled, &o.DisableIdentity, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.PoolTimeout, &o.PoolSize)
		}
	case redisCluster:
		if t.cluster, err = redis.ParseClusterURL(rawURL); err == nil {
			o := t.cluster
			defaults(&o.ContextTimeoutEnabled, &o.DisableIdentity, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.PoolTimeout, &o.PoolSize)
			o.ClusterStateReloadInterval = clusterReload
		}
	case redisSentinel:
		if t.failover, err = redis.ParseFailoverURL(rawURL); err == nil {
			o := t.failover
			defaults(&o.ContextTimeoutEnabled, &o.DisableIdentity, &o.ReadTimeout, &o.WriteTimeout, &o.DialTimeout, &o.PoolTimeout, &o.PoolSize)
			if o.MasterName == "" {
				err = fmt.Errorf("sentinel mode needs master_name in the URL (redis://sentinel:26379?master_name=NAME&addr=sentinel2:26379)")
			}
		}
	default:
		return t, fmt.Errorf("SECKILL_REDIS_MODE=%q: must be single, cluster or sentinel", mode)
	}
	if uerr, ok := errors.AsType[*url.Error](err); ok {
		// url.Error quotes the URL, which may hold a password.
		err = uerr.Err
	}
	if err != nil {
		return t, fmt.Errorf("SECKILL_REDIS_URL (mode %s): %w", mode, err)
	}
	return t, nil
}

// checkRedisScheme refuses a URL without a scheme ("127.0.0.1:6379"), which
// the parser would read as a scheme and an opaque part, or as a first path
// segment with a colon, and say so in words that do not help. The value is
// shown only when it cannot hold a password.
func checkRedisScheme(mode, rawURL string) error {
	if strings.Contains(rawURL, "://") {
		return nil
	}
	example := "redis://127.0.0.1:6379/0"
	switch mode {
	case redisCluster:
		example = "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002"
	case redisSentinel:
		example = "redis://127.0.0.1:26379?master_name=NAME&addr=127.0.0.1:26380"
	}
	got := ""
	if !strings.ContainsAny(rawURL, "@?") {
		got = fmt.Sprintf("=%q", rawURL)
		if mode == redisSingle {
			example = "redis://" + rawURL
		}
	}
	return fmt.Errorf("SECKILL_REDIS_URL%s (mode %s): the redis:// scheme is missing: write redis://[user:password@]host:port[/db] (rediss:// for TLS), such as %s", got, mode, example)
}

// defaults fills what the URL left unset. Without ContextTimeoutEnabled a
// context deadline does not interrupt a command in flight, and the deadlines
// the purchase path derives from the lease would mean nothing. A flash sale
// is a burst of short commands: enough connections that requests do not
// queue for one, few enough not to swamp Redis. No CLIENT SETINFO on
// connect: the service's Redis ACL user is not allowed it (Redis before 7.2
// does not know it, and refuses it in an ACL rule), and go-redis would send
// it on every new connection for a name in CLIENT LIST.
func defaults(ctxTimeout, noIdentity *bool, read, write, dial, poolWait *time.Duration, pool *int) {
	*ctxTimeout, *noIdentity = true, true
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{read, 500 * time.Millisecond}, {write, 500 * time.Millisecond}, {dial, 2 * time.Second}, {poolWait, time.Second}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if *pool == 0 {
		*pool = 64
	}
}

// client builds the one client every package shares.
func (t redisTopology) client() redis.UniversalClient {
	switch {
	case t.cluster != nil:
		return redis.NewClusterClient(t.cluster)
	case t.failover != nil:
		return redis.NewFailoverClient(t.failover)
	default:
		return redis.NewClient(t.single)
	}
}

// addrs names the servers for messages: addresses only, never the URL.
func (t redisTopology) addrs() string {
	switch {
	case t.cluster != nil:
		return "cluster " + strings.Join(t.cluster.Addrs, ",")
	case t.failover != nil:
		return "sentinels " + strings.Join(t.failover.SentinelAddrs, ",") + " (master " + t.failover.MasterName + ")"
	default:
		return t.single.Addr
	}
}

// redisWithoutCredentials is the secure defaults' rule for SECKILL_REDIS_URL:
// a Redis that is not on loopback must ask who connects, since whoever can
// write to it can change stock, admissions and pause marks, and forge order
// events. In sentinel mode the credentials are the primary's (the URL's
// username and password query parameters; the user part of the URL is the
// Sentinels'). rediss:// (TLS) is read the same way.
func redisWithoutCredentials(c config) string {
	t := c.Redis
	if len(t.servers()) == 0 || t.loopback() || t.credentials() { // none: embedded, or not parsed
		return ""
	}
	how := "redis://USER:PASSWORD@host:port/db (rediss:// for TLS)"
	if t.failover != nil {
		how = "redis://sentinel:26379?master_name=NAME&username=USER&password=PASSWORD (the primary's user)"
	}
	return fmt.Sprintf("SECKILL_REDIS_URL names a Redis that is not loopback (%s) and carries no credentials: whoever reaches it could change stock and forge order events; give the service a Redis ACL user and write %s", t.addrs(), how)
}

// servers are the addresses the topology connects to first.
func (t redisTopology) servers() []string {
	switch {
	case t.cluster != nil:
		return t.cluster.Addrs
	case t.failover != nil:
		return t.failover.SentinelAddrs
	case t.single != nil:
		return []string{t.single.Addr}
	}
	return nil
}

// loopback reports whether every server of the topology is on loopback.
func (t redisTopology) loopback() bool {
	for _, a := range t.servers() {
		if !loopbackAddr(a) {
			return false
		}
	}
	return len(t.servers()) > 0
}

// credentials reports whether the topology authenticates to its data nodes.
func (t redisTopology) credentials() bool {
	switch {
	case t.cluster != nil:
		return t.cluster.Username != "" || t.cluster.Password != ""
	case t.failover != nil:
		return t.failover.Username != "" || t.failover.Password != ""
	case t.single != nil:
		return t.single.Username != "" || t.single.Password != ""
	}
	return false
}
