package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/redisacl"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

const (
	aclServicePassword = "service-password-of-the-test"
	aclEventsPassword  = "events-password-of-the-test"
)

// TestRedisACLLeastPrivilege applies the users `seckill redis-acl` prints
// to a Redis of the test's own, then runs a sale through the service's user
// (quantities, a sold-out refusal, a payment, a waiting room, the audit)
// and `events tail` through the consumers' user, and finds nothing in
// Redis's ACL LOG: the ACL is enough. Then it shows the ACL holds: the
// service's user may not FLUSHALL, list keys or touch a key outside its
// prefix, and the consumers' user may not forge an event.
func TestRedisACLLeastPrivilege(t *testing.T) { aclSaleThrough(t, "") }

// tlsCertsEnv names, in the process TestRedisACLOverTLS starts, the
// directory of the certificate its Redis serves and SSL_CERT_FILE trusts.
const tlsCertsEnv = "SECKILL_TEST_REDIS_TLS_CERTS"

// TestRedisACLOverTLS is TestRedisACLLeastPrivilege on a Redis that speaks
// TLS only, through rediss:// URLs that verify its certificate as a
// production one would be: against the system's roots, here SSL_CERT_FILE.
// Go reads that once per process, so the test runs itself again in a
// process of its own that trusts the test's certificate from the start.
func TestRedisACLOverTLS(t *testing.T) {
	dir := os.Getenv(tlsCertsEnv)
	if dir != "" {
		aclSaleThrough(t, dir)
		return
	}
	dir = serverCert(t)
	child := exec.Command(os.Args[0], "-test.run=^TestRedisACLOverTLS$", "-test.count=1", "-test.timeout=5m")
	child.Env = append(os.Environ(), "SSL_CERT_FILE="+filepath.Join(dir, "cert.pem"), tlsCertsEnv+"="+dir)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("the test in a process trusting the test's certificate: %v\n%s", err, out)
	}
}

// aclSaleThrough is the sale and the refusals of TestRedisACLLeastPrivilege
// on a Redis of the test's own: in plain text, the users applied as the ACL
// SETUSER commands `seckill redis-acl` prints; over TLS with certDir
// (ownRedis), the users of the aclfile `seckill redis-acl -format aclfile`
// writes, the file Redis starts with.
func aclSaleThrough(t *testing.T, certDir string) {
	t.Helper()
	env := realEnv(t, 0)
	env["SECKILL_REDIS_SERVICE_PASSWORD"] = aclServicePassword
	env["SECKILL_REDIS_EVENTS_PASSWORD"] = aclEventsPassword
	scheme := "redis://"
	var port int
	var admin *redis.Client
	if certDir == "" {
		port, admin = ownRedis(t, "", aclFile(t, redisacl.DefaultFileLine+"\n"))
		applyACL(t, admin, env)
	} else {
		scheme = "rediss://"
		file := filepath.Join(t.TempDir(), "generated.acl")
		redisACL(t, env, "-format", "aclfile", "-out", file)
		generated, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		port, admin = ownRedis(t, certDir, aclFile(t, string(generated)))
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env["SECKILL_REDIS_URL"] = scheme + "seckill:" + aclServicePassword + "@" + addr + "/0"
	pay := start(t, nil, "paystub", "-addr", "127.0.0.1:0", "-merchant-id", "m-acl")
	payBase := "http://" + pay.addr()
	env["SECKILL_PAYMENT_URL"] = payBase
	env["SECKILL_PAYMENT_SECRET"] = "acl-test-secret-0123456789abcdef"
	env["SECKILL_PAYMENT_MERCHANT_ID"] = "m-acl"
	p := start(t, env, "serve")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s\nACL LOG: %v", p.stderr, aclLog(t, admin))
		}
	})
	base := "http://" + p.addr()
	adminAPI := map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}

	aclSale(t, base, payBase, adminAPI)
	tail := map[string]string{
		"SECKILL_REDIS_URL":  scheme + "seckill-events:" + aclEventsPassword + "@" + addr + "/0",
		"SECKILL_KEY_PREFIX": env["SECKILL_KEY_PREFIX"],
	}
	events := start(t, tail, "events", "tail")
	testenv.WaitFor(t, 20*time.Second, "events tail to print an order.paid event", func() bool {
		return strings.Contains(events.stdout.String(), `"type":"order.paid"`)
	})
	if err := events.stop(); err != nil {
		t.Fatalf("events tail: %v\n%s", err, events.stderr)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if log := aclLog(t, admin); len(log) > 0 {
		t.Fatalf("Redis refused the service or the consumer %d time(s) under the printed ACL; ACL LOG: %v", len(log), log)
	}
	aclRefusals(t, addr, env["SECKILL_KEY_PREFIX"], admin.Options().TLSConfig)
}

// aclSale runs a sale of 5 units, at most 3 a buyer, with payments on: 2
// units, then 1 and 1, then 2 refused (1 left); the first order paid; a
// waiting room joined; the audit consistent.
func aclSale(t *testing.T, base, payBase string, admin map[string]string) {
	t.Helper()
	now := time.Now().UTC()
	code, act := call(t, "POST", base+"/admin/v1/activities", admin, fmt.Sprintf(
		`{"name":"acl","total_stock":5,"per_user_limit":3,"price_minor":100,"currency":"CNY","starts_at":%q,"ends_at":%q}`,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, act)
	}
	id := int64(act["id"].(float64))
	if code, v := call(t, "POST", fmt.Sprintf("%s/admin/v1/activities/%d/preload", base, id), admin, ""); code != http.StatusOK {
		t.Fatalf("preload: %d %v", code, v)
	}
	orders := fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id)
	var first string
	for _, b := range []struct{ user, quantity, want int }{{1, 2, http.StatusCreated}, {2, 1, http.StatusCreated}, {3, 1, http.StatusCreated}, {4, 2, http.StatusConflict}} {
		code, v := call(t, "POST", orders, map[string]string{"X-User-ID": strconv.Itoa(b.user)}, fmt.Sprintf(`{"quantity":%d}`, b.quantity))
		if code != b.want {
			t.Fatalf("user %d buys %d: %d %v, want %d", b.user, b.quantity, code, v, b.want)
		}
		if b.user == 1 {
			first, _ = v["order_id"].(string)
		}
	}
	if code, v := call(t, "PUT", payBase+"/stub/payments/"+first, nil, `{"status":"paid","amount_minor":200,"currency":"CNY"}`); code/100 != 2 {
		t.Fatalf("pay %s at the stub: %d %v", first, code, v)
	}
	var mine map[string]any
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last answer for the order: %v", mine)
		}
	})
	testenv.WaitFor(t, 10*time.Second, "order "+first+" paid", func() bool {
		_, mine = call(t, "GET", orders+"/mine", map[string]string{"X-User-ID": "1"}, "")
		return mine["status"] == "paid"
	})
	code, audit := call(t, "GET", fmt.Sprintf("%s/admin/v1/activities/%d/audit", base, id), admin, "")
	if code != http.StatusOK || audit["orders"] != 3.0 || audit["redis_remaining"] != 1.0 || audit["consistent"] != true {
		t.Fatalf("audit: %d %v", code, audit)
	}
	room := startWaitingRoom(t, base, admin)
	if code, v := call(t, "GET", fmt.Sprintf("%s/admin/v1/activities/%d/audit", base, room), admin, ""); code != http.StatusOK {
		t.Fatalf("audit of the room: %d %v", code, v)
	}
}

// aclRefusals shows what the users may not do: each answered NOPERM.
func aclRefusals(t *testing.T, addr, prefix string, tlsConfig *tls.Config) {
	t.Helper()
	ctx := context.Background()
	svc := redis.NewClient(&redis.Options{Addr: addr, Username: "seckill", Password: aclServicePassword, TLSConfig: tlsConfig})
	defer svc.Close()
	consumer := redis.NewClient(&redis.Options{Addr: addr, Username: "seckill-events", Password: aclEventsPassword, TLSConfig: tlsConfig})
	defer consumer.Close()
	anonymous := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tlsConfig})
	defer anonymous.Close()
	aclConsumerGroup(t, consumer, prefix+"events")
	for what, err := range map[string]error{
		"the service's FLUSHALL":                        svc.FlushAll(ctx).Err(),
		"the service's KEYS":                            svc.Keys(ctx, "*").Err(),
		"the service's CONFIG SET":                      svc.ConfigSet(ctx, "maxmemory", "1").Err(),
		"the service's GET of a key outside its prefix": svc.Get(ctx, "other:"+keys.Space{}.Stock(1)).Err(),
		"the service's SET of another prefix's stock":   svc.Set(ctx, keys.NewSpace("other:").Stock(1), 1, 0).Err(),
		"the consumer's XADD (a forged event)":          consumer.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "events", Values: []any{"event", "{}"}}).Err(),
		"the consumer's XDEL":                           consumer.XDel(ctx, prefix+"events", "0-1").Err(),
		"the consumer's HSET of the stock":              consumer.HSet(ctx, keys.NewSpace(prefix).Stock(1), "remaining", 100).Err(),
		"an unauthenticated GET":                        anonymous.Get(ctx, keys.NewSpace(prefix).Stock(1)).Err(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("%s: %v, want NOPERM", what, err)
		}
	}
	if err := svc.HGet(ctx, keys.NewSpace(prefix).Stock(1), "remaining").Err(); err != nil && !errors.Is(err, redis.Nil) {
		t.Errorf("the service's HGET in its prefix: %v", err)
	}
}

// aclConsumerGroup reads the stream as docs/DEPLOY.md's consumer does,
// through consumer: its group made, an entry read and acknowledged, the
// group looked at.
func aclConsumerGroup(t *testing.T, consumer *redis.Client, stream string) {
	t.Helper()
	ctx := context.Background()
	if err := consumer.XGroupCreateMkStream(ctx, stream, "fulfilment", "0").Err(); err != nil {
		t.Fatalf("the consumer's XGROUP CREATE: %v", err)
	}
	res, err := consumer.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "fulfilment", Consumer: "c1", Streams: []string{stream, ">"}, Count: 1}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 1 {
		t.Fatalf("the consumer's XREADGROUP: %v %v", res, err)
	}
	if err := consumer.XAck(ctx, stream, "fulfilment", res[0].Messages[0].ID).Err(); err != nil {
		t.Fatalf("the consumer's XACK: %v", err)
	}
	if groups, err := consumer.XInfoGroups(ctx, stream).Result(); err != nil || len(groups) != 1 {
		t.Fatalf("the consumer's XINFO GROUPS: %v %v", groups, err)
	}
}

// redis-acl takes the passwords from the environment, prints only their
// SHA-256, and refuses to print users without them, naming the variables.
func TestRedisACLCommandPasswords(t *testing.T) {
	var out, stderr strings.Builder
	err := run(context.Background(), []string{"seckill", "redis-acl"}, func(string) string { return "" }, &out, &stderr)
	if err == nil || !strings.Contains(err.Error(), envRedisServicePassword) || !strings.Contains(err.Error(), envRedisEventsPassword) || out.Len() > 0 {
		t.Fatalf("without passwords: %v, printed %q; want a refusal naming both variables, nothing printed", err, out.String())
	}
	env := map[string]string{envRedisServicePassword: "svc-secret-value", envRedisEventsPassword: "ev-secret-value", "SECKILL_KEY_PREFIX": "shop1:"}
	for _, format := range []string{"setuser", "aclfile"} {
		text := redisACL(t, env, "-format", format)
		if strings.Contains(text, "secret-value") || !strings.Contains(text, redisacl.PasswordRule("svc-secret-value")) ||
			!strings.Contains(text, " ~shop1:seckill:* ~shop1:events ") {
			t.Errorf("-format %s printed a password, or not its hash, or not the prefix's keys:\n%s", format, text)
		}
	}
	if err := run(context.Background(), []string{"seckill", "redis-acl", "-format", "json"}, func(k string) string { return env[k] }, &out, &stderr); !errors.Is(err, errUsage) {
		t.Errorf("-format json: %v, want a usage error", err)
	}
}

// No topology sends CLIENT SETINFO, which the ACL does not grant: Redis 7.2
// and later would refuse it on every new connection (and log each in ACL
// LOG); the Redis of the tests, 7.0, does not know the command.
func TestRedisClientsSendNoIdentity(t *testing.T) {
	for mode, url := range map[string]string{redisSingle: "redis://127.0.0.1:6379", redisCluster: "redis://127.0.0.1:7000", redisSentinel: "redis://127.0.0.1:26379?master_name=m"} {
		top, err := parseRedis(mode, url)
		if err != nil {
			t.Fatal(err)
		}
		if top.single != nil && !top.single.DisableIdentity || top.cluster != nil && !top.cluster.DisableIdentity || top.failover != nil && !top.failover.DisableIdentity {
			t.Errorf("mode %s: go-redis would send CLIENT SETINFO on connect", mode)
		}
	}
}
