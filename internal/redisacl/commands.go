// Package redisacl is the Redis access the service needs, in one place: the
// commands it sends (its code's, its scripts', its client library's) and the
// keys and channels it touches, written out as Redis ACL rules for the
// service and for the consumers of its order events (`seckill redis-acl`).
//
// A Redis ACL applies to the commands a script runs as well as to the
// script's own EVALSHA: every redis.call in a .lua file is a command the
// service's user must be allowed. commands_test.go reads the service's code
// and embedded scripts and fails when they use a command missing here, or
// when a command here is no longer used.
package redisacl

import "slices"

// Used are the commands the service's code and scripts send, lower case, a
// subcommand as command|subcommand. commands_test.go holds this list to the
// code: exactly the commands found in it.
var Used = []string{
	// Scripts: go-redis's Script.Run sends EVALSHA, and EVAL when Redis
	// has not cached the script (NOSCRIPT).
	"evalsha", "eval",
	// Transactions (TxPipeline) and the WAIT for replicas
	// (SECKILL_REDIS_WAIT_REPLICAS); PING is the readiness probe's.
	"multi", "exec", "wait", "ping",
	// Strings and keys.
	"get", "set", "del", "exists", "incr", "pexpire", "pexpireat", "pttl", "scan",
	// Hashes.
	"hget", "hmget", "hset", "hsetnx", "hdel", "hexists", "hincrby",
	// Sets.
	"sadd", "sismember", "smismember",
	// Sorted sets.
	"zadd", "zcard", "zincrby", "zpopmin", "zrangebyscore", "zrank", "zrem", "zremrangebyscore", "zscore",
	// The order events' stream: XADD; XREAD and XINFO STREAM (whether the
	// stream has entries) are `seckill events tail`'s.
	"xadd", "xread", "xinfo|stream",
	// The waiting rooms' notes (a stream a room): each instance's watch
	// reads the newest and those after its cursor (the long poll).
	"xrange", "xrevrange",
	// Scripts read the server's clock.
	"time",
}

// Connection are the commands go-redis sends on a new connection: HELLO
// (with the credentials; AUTH on a server without HELLO), SELECT for a
// database other than 0 in the URL, CLIENT SETNAME for a client_name in the
// URL. The service turns off go-redis's CLIENT SETINFO (DisableIdentity),
// which Redis before 7.2 does not know and would refuse in an ACL rule.
var Connection = []string{"hello", "auth", "select", "client|setname"}

// Cluster are the commands a Cluster client sends by itself
// (SECKILL_REDIS_MODE=cluster): the slot map, the command table it routes
// by, ASKING after an ASK redirection during resharding, READONLY with
// read_only in the URL.
var Cluster = []string{"cluster|slots", "command", "asking", "readonly"}

// Consumer are the commands an event consumer may send besides Connection
// and Cluster: read the stream (XREAD), or read it in a consumer group
// (XREADGROUP, XACK, XINFO, and XGROUP CREATE and CREATECONSUMER to make its
// group and itself). Nothing that adds, deletes or trims entries, nor that
// moves or destroys another group (XGROUP SETID, DESTROY).
var Consumer = []string{"xread", "xreadgroup", "xack", "xinfo", "xgroup|create", "xgroup|createconsumer", "ping"}

// ServiceCommands is everything the service's user is allowed, sorted.
func ServiceCommands() []string { return sorted(Used, Connection, Cluster) }

// ConsumerCommands is everything the consumers' user is allowed, sorted.
func ConsumerCommands() []string { return sorted(Consumer, Connection, Cluster) }

func sorted(lists ...[]string) []string {
	all := slices.Concat(lists...)
	slices.Sort(all)
	return slices.Compact(all)
}
