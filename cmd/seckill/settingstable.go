package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seckill-oss/seckill/internal/order"
)

// settingsTable is every SECKILL_* setting serve reads, in the order read
// (a setting's read and its default may use those above it) and printed.
// Its defaults are the ones the service runs with: it hands every value to
// the packages explicitly, whose own defaults only fill a zero Config.
// Its meanings are README.md's table of settings (TestSettingsTableIsTheREADMEs).
var settingsTable = []setting{
	// Listeners and stores.
	word("SECKILL_HTTP_ADDR", ":8080", "listen address, `host:port` (a port alone, `8080`, is refused: write `:8080`; a port taken by another process is named at start-up); the demo listens on `127.0.0.1:8080` unless this names another loopback address",
		func(c *config) *string { return &c.HTTPAddr }, func(v string) error { return checkListenAddr("SECKILL_HTTP_ADDR", v) }),
	word("SECKILL_ADMIN_ADDR", "", "a second listen address (e.g. `127.0.0.1:9091`) for the admin API, `/metrics` and pprof (`/debug/pprof/`, behind the admin token like the admin API), which are then served only there: the public listener answers them `404 not_found`, saying they are served on the admin address. Unset: the admin API and `/metrics` on the public listener (a warning when it is not loopback), no pprof",
		func(c *config) *string { return &c.AdminAddr }, optional(func(v string) error { return checkListenAddr("SECKILL_ADMIN_ADDR", v) })).
		secure(warn, func(c config) string {
			return when(c.AdminAddr == "" && !loopbackAddr(c.HTTPAddr), fmt.Sprintf("SECKILL_ADMIN_ADDR is unset and SECKILL_HTTP_ADDR=%q is not loopback: the admin API and /metrics are served on the public listener; set SECKILL_ADMIN_ADDR to a private address such as 127.0.0.1:9091", c.HTTPAddr))
		}),
	yesNo("SECKILL_HTTP2_CLEARTEXT", true, "`true`: the public listener also speaks HTTP/2 without TLS to a client that starts with it (prior knowledge, as a gateway's upstream `h2c`), beside HTTP/1.1: one connection then carries up to 250 requests at once, held long polls included, so a crowd held by the waiting room costs the instance no open file per request (docs/DEPLOY.md, \"Long polls and open files\"); `false`: HTTP/1.1 only. The admin listener speaks HTTP/1.1 only",
		func(c *config) *bool { return &c.HTTP2Cleartext }),
	choice("SECKILL_REDIS_MODE", redisSingle, "`single`, `cluster` or `sentinel`: how `SECKILL_REDIS_URL` is read (go-redis `ParseURL`, `ParseClusterURL`: `redis://h1:p1?addr=h2:p2&addr=h3:p3`, `ParseFailoverURL`: `redis://sentinel1:p?master_name=NAME&addr=sentinel2:p`); docs/DEPLOY.md. The embedded store is always single",
		"single, cluster or sentinel", func(c *config) *string { return &c.RedisMode }, redisSingle, redisCluster, redisSentinel),
	text("SECKILL_REDIS_URL", "`redis://[user:pass@]host:port/db`, `rediss://` for TLS; go-redis query options (`pool_size`, `read_timeout`, ...) override the defaults (pool 64, read/write timeout 500ms). Required by `serve`, with `SECKILL_MYSQL_DSN`; under the secure defaults a host that is not loopback needs credentials in the URL. The demo uses an in-process store",
		func(c *config) *string { return &c.RedisURL }).with(readRedisURL).
		secure(refuse, redisWithoutCredentials),
	text("SECKILL_KEY_PREFIX", "prefix of every Redis key, to share one Redis; must not contain `{` or `}` (an activity's keys share the hash tag `{act:N}`). Unset: no prefix",
		func(c *config) *string { return &c.KeyPrefix }).with(readKeyPrefix),
	count("SECKILL_REDIS_WAIT_REPLICAS", 0, 0, maxWaitReplicas, "replicas (0: no WAIT)", "after each lock grant and each deduct, `WAIT` for this many Redis replicas; fewer within the timeout is `503` and nothing is sold; `0`: no `WAIT`",
		func(c *config) *int { return &c.WaitReplicas }),
	duration("SECKILL_REDIS_WAIT_TIMEOUT", 100*time.Millisecond, time.Millisecond, "timeout of that `WAIT`; under a quarter of the lock TTL",
		func(c *config) *time.Duration { return &c.WaitTimeout }),
	text("SECKILL_MYSQL_DSN", "go-sql-driver DSN, e.g. `seckill:seckill@tcp(127.0.0.1:3306)/seckill?parseTime=true` (`clientFoundRows` is forced off); a URL (`mysql://...`) is refused, showing this form; a database that does not exist is named with the `CREATE DATABASE` to run. Required by `serve`, with `SECKILL_REDIS_URL`; the demo uses SQLite in a temp dir",
		func(c *config) *string { return &c.MySQLDSN }).with(readDSN("SECKILL_MYSQL_DSN", func(c *config) *string { return &c.MySQLDSN })),
	count("SECKILL_MYSQL_MAX_CONNS", 16, 1, order.MaxPoolConns, "connections", "most connections of the database pool. Each activity on sale in this instance has one batch leader holding one connection per batch; payments, expiry and admin reads share the rest. Size it to the activities sold at once plus a few, and keep instances x this under the server's `max_connections`",
		func(c *config) *int { return &c.MySQLMaxConns }),
	text("SECKILL_MIGRATE_DSN", "the DSN `seckill migrate` connects with instead of `SECKILL_MYSQL_DSN`: a user allowed to change the schema, so the runtime user needs only `SELECT, INSERT, UPDATE, DELETE` (docs/DEPLOY.md, \"Least-privilege database user\"). Unset: `SECKILL_MYSQL_DSN`",
		func(c *config) *string { return &c.MigrateDSN }).with(readDSN("SECKILL_MIGRATE_DSN", func(c *config) *string { return &c.MigrateDSN })),
	custom("SECKILL_MIGRATIONS", migrationsApply, "`apply`: `serve` applies pending migrations at start-up; `skip`: it applies none and refuses to start while the schema is behind, saying to run `seckill migrate` (the embedded database is always migrated); another value stops start-up", readMigrations),

	// The secure defaults and who may buy.
	yesNo("SECKILL_STRICT", true, "`true`: the secure defaults (docs/API.md, \"Secure defaults\"): `serve` refuses to start on each unsafe setting (no user check, unsigned identities on a public listener, weak secrets, a Redis off loopback without credentials, ...), naming it and the value that opts in on purpose, and warns of each risky one it allows. `false` restores the earlier defaults, with one warning at start-up naming each unsafe one in force. The demo ignores it",
		func(c *config) *bool { return &c.Strict }),
	text("SECKILL_USERCHECK_URL", "base URL of the user-verification service. Unset: `serve` refuses to start unless `SECKILL_USERCHECK=approve-all` (or `SECKILL_STRICT=false`: approve everyone, with a warning); the demo approves everyone",
		func(c *config) *string { return &c.UserCheckURL }).
		secure(refuse, func(c config) string {
			return when(c.UserCheckURL == "" && !c.ApproveAll, "SECKILL_USERCHECK_URL is unset: every buyer would be approved; set it to the user-verification service, or SECKILL_USERCHECK=approve-all to approve every buyer on purpose")
		}),
	custom("SECKILL_USERCHECK", "", "`approve-all`: approve every buyer without a user check, on purpose (a warning at start-up); the only value", readUserCheck).
		secure(warn, func(c config) string {
			return when(c.ApproveAll, "SECKILL_USERCHECK=approve-all: every buyer is approved without verification, on purpose")
		}),
	duration("SECKILL_USERCHECK_TIMEOUT", 500*time.Millisecond, time.Millisecond, "deadline of one verification call; must be shorter than the lock TTL or start-up fails",
		func(c *config) *time.Duration { return &c.UserCheckTimeout }),
	text("SECKILL_IDENTITY_SECRET", "when set, `X-User-ID` must come with the gateway's `X-User-Timestamp` and `X-User-Signature` (±5 min), signature version 2 or 3 (docs/API.md); at least 32 bytes with enough variety (16 bytes with `SECKILL_STRICT=false`). Unset: `X-User-ID` trusted unsigned, which `serve` allows only on a loopback `SECKILL_HTTP_ADDR` or with `SECKILL_IDENTITY=trusted-gateway`",
		func(c *config) *string { return &c.IdentitySecret }).with(readIdentitySecret).
		secure(refuse, func(c config) string {
			return when(!loopbackAddr(c.HTTPAddr) && c.IdentitySecret == "" && !c.TrustedGateway, fmt.Sprintf("SECKILL_IDENTITY_SECRET is unset and SECKILL_HTTP_ADDR=%q is not loopback: anyone who reaches the port could act as any buyer; set SECKILL_IDENTITY_SECRET to the gateway's signing secret, or SECKILL_IDENTITY=%s if only the gateway reaches the port", c.HTTPAddr, identityTrustedGateway))
		}).secret(minStrictSecret, func(c config) string { return c.IdentitySecret }),
	custom("SECKILL_IDENTITY", "", "`trusted-gateway`: `X-User-ID` trusted unsigned on a listener that is not loopback, on purpose: only the gateway reaches the port (a warning at start-up); the only value, and not with `SECKILL_IDENTITY_SECRET`", readIdentity).
		secure(warn, func(c config) string {
			return when(c.TrustedGateway && !loopbackAddr(c.HTTPAddr), "SECKILL_IDENTITY=trusted-gateway: X-User-ID is trusted unsigned on a listener that is not loopback-only: only the gateway, which strips a client's X-User-ID, may reach it (see the trust boundary in docs/DEPLOY.md, Security)")
		}),
	withUnset(yesNo("SECKILL_IDENTITY_LEGACY", false, "with `SECKILL_IDENTITY_SECRET`: `true` also accepts the legacy signature, which a captured one replays on another route; `false` accepts version 2 and 3 only. Unset: `false`, `true` with `SECKILL_STRICT=false`",
		func(c *config) *bool { return &c.IdentityLegacy }), func(c *config) string { return strconv.FormatBool(!c.Strict) }).
		secure(warn, func(c config) string {
			return when(c.IdentitySecret != "" && c.IdentityLegacy, "SECKILL_IDENTITY_LEGACY=true: the legacy identity signature, replayable across routes for its lifetime, is accepted")
		}),
	text("SECKILL_ADMIN_TOKEN", "bearer token of the admin API; at least 16 bytes with enough variety (`openssl rand -hex 32`), else `serve` refuses to start (a warning with `SECKILL_STRICT=false` or in the demo). Unset: the admin API answers `403 admin_disabled`; the demo generates one and prints it (never logs it)",
		func(c *config) *string { return &c.AdminToken }).secret(minSecretLen, func(c config) string { return c.AdminToken }),

	// The purchase path.
	duration("SECKILL_LOCK_TTL", 2*time.Second, 10*time.Millisecond, "lease of the per-activity lock",
		func(c *config) *time.Duration { return &c.LockTTL }),
	duration("SECKILL_LOCK_WAIT", time.Second, time.Millisecond, "how long a purchase may wait in its activity's queue for a batch to take it, and how long a batch waits for a lock another instance holds; past either: `429 busy`",
		func(c *config) *time.Duration { return &c.LockWait }),
	count("SECKILL_QUEUE_MAX", 10_000, 1, maxQueueMax, "buyers", "buyers of one activity that may wait in one instance's queue; one more: `429 busy`",
		func(c *config) *int { return &c.QueueMax }),
	count("SECKILL_QUEUE_MAX_TOTAL", 20_000, 1, maxQueueMax, "buyers", "buyers of all activities together that may wait in one instance's queues; one more: `429 busy`",
		func(c *config) *int { return &c.QueueMaxTotal }),
	rate("SECKILL_RATE_GLOBAL", 0, 0, noLimit, "requests/s for the whole instance to every public route but `/healthz` and `/readyz` (burst: one second's worth); past it `429 busy`; `0`: no limit",
		func(c *config) *float64 { return &c.RateGlobal }).offWarned(func(c config) float64 { return c.RateGlobal }),
	// On by default, so one user id cannot spend the instance alone, and
	// generous enough that no person, nor an app's retries, nor a test's 100
	// concurrent purchases by one user (the burst, userBurstSeconds' worth)
	// ever meets it.
	rate("SECKILL_RATE_PER_USER", 50, 0, noLimit, "purchase attempts/s per `X-User-ID` (burst: four seconds' worth, 200 at the default); past it `429 busy`; `0` turns it off (a warning at start-up)",
		func(c *config) *float64 { return &c.RatePerUser }).offWarned(func(c config) float64 { return c.RatePerUser }),
	// A person's polling, a result page every second or a waiting room's
	// refresh_s, is far below it, and with userBurstSeconds' burst 80 reads
	// at once pass; one user's scraper of orders/mine or queue/mine is not.
	rate("SECKILL_RATE_PER_USER_READS", 20, 0, noLimit, "the user's other buyer requests/s (`orders/mine`, cancel, and `GET /api/v1/activities/{id}` when it carries an `X-User-ID`), in a bucket of their own (burst: four seconds' worth); past it `429 busy`; `0` turns it off (a warning at start-up)",
		func(c *config) *float64 { return &c.RatePerUserReads }).offWarned(func(c config) float64 { return c.RatePerUserReads }),
	rate("SECKILL_RATE_JOINS_PER_ADDRESS", 0, 0, noLimit, "waiting-room joins/s per client address (IPv6 by its /64), burst four seconds' worth; past it `429 busy`. Only where clients reach the service directly; `0`: no limit",
		func(c *config) *float64 { return &c.RateJoinsPerAddress }).offWarned(func(c config) float64 { return c.RateJoinsPerAddress }),

	// Waiting rooms.
	duration("SECKILL_ADMISSION_TTL", time.Minute, time.Second, "how long a waiting room's admission lasts: the admitted buyer may buy until `admitted_until`, then it lapses and goes to the next place in line (docs/API.md, \"Waiting room\"); at least `1s`",
		func(c *config) *time.Duration { return &c.AdmissionTTL }),
	rate("SECKILL_ADMISSION_RATE", 2000, 1, "admissions a second, from 1 to 1e9", "the most admissions/s one activity's waiting room gives (at least `1`); the pace starts at a tenth of it and follows twice the measured purchase rate, never below that tenth",
		func(c *config) *float64 { return &c.AdmissionRate }),
	count("SECKILL_ROOM_MAX_PLACES", 1_000_000, 1, maxRoomPlaces, "places", "the most places not yet admitted one activity's waiting room holds (1 to 100,000,000); a join past it is `429 busy` and gets no place",
		func(c *config) *int { return &c.RoomMaxPlaces }),
	count("SECKILL_ROOM_MAX_HELD", 100_000, 0, maxRoomHeld, "held requests (0: none held)", "the most `queue/mine?wait=` requests one instance holds at once; past it `wait` is ignored and the status answered at once; `0` holds none (0 to 10,000,000)",
		func(c *config) *int { return &c.RoomMaxHeld }),
	duration("SECKILL_ADMISSION_IDLE", 0, 0, "an admission lapses early once its buyer has not polled, joined or tried to buy for this long, counted from when they were due back at the earliest (no-shows stop holding units); `admitted_until` is then the latest it lasts; `0`: off",
		func(c *config) *time.Duration { return &c.AdmissionIdle }),

	// Payments.
	text("SECKILL_PAYMENT_URL", "base URL of the payment provider; orders must be paid within the window or expire. Must be `https://`, or `http://` on a loopback host, else start-up fails. Unset: payments off (the demo: an in-process payment stub)",
		func(c *config) *string { return &c.PaymentURL }).
		secure(inForce, func(c config) string {
			return when(c.PaymentURL != "", "SECKILL_PAYMENT_URL set: activities without a price accepted, and their orders paid by any payment")
		}),
	yesNo("SECKILL_PAYMENT_ALLOW_HTTP", false, "`true` accepts a plain `http://` provider on any host (a trusted sidecar; docker-compose's stub), with a warning at start-up when the host is not loopback",
		func(c *config) *bool { return &c.PaymentAllowHTTP }).secure(warn, plainHTTPProvider),
	duration("SECKILL_PAYMENT_WINDOW", 15*time.Minute, time.Second, "how long an order may stay unpaid (at least `1s`)",
		func(c *config) *time.Duration { return &c.PaymentWindow }),
	text("SECKILL_PAYMENT_SECRET", "HMAC-SHA256 key of payment callbacks (`X-Signature`, over `<X-Signature-Timestamp>.<body>`); at least 32 bytes with enough variety (`openssl rand -hex 32`), else `serve` refuses to start (a warning with `SECKILL_STRICT=false`). Required with `SECKILL_PAYMENT_URL`",
		func(c *config) *string { return &c.PaymentSecret }).secret(minStrictSecret, func(c config) string { return c.PaymentSecret }),
	text("SECKILL_PAYMENT_SECRET_PREVIOUS", "during a rotation, the old callback secret, also accepted; held to the rules of `SECKILL_PAYMENT_SECRET`",
		func(c *config) *string { return &c.PaymentSecretPrevious }).secret(minStrictSecret, func(c config) string { return c.PaymentSecretPrevious }),
	word("SECKILL_PAYMENT_MERCHANT_ID", "", "this service's merchant id at the provider: a paid answer naming another is `refund_required` (`merchant_mismatch`). Required by `serve` with `SECKILL_PAYMENT_URL` (unset with `SECKILL_STRICT=false`: not checked, with a warning)",
		func(c *config) *string { return &c.PaymentMerchantID }, nil).
		secure(refuse, func(c config) string {
			return when(c.PaymentURL != "" && c.PaymentMerchantID == "", "SECKILL_PAYMENT_MERCHANT_ID is unset with SECKILL_PAYMENT_URL: a paid answer's merchant would not be checked")
		}),
	text("SECKILL_PAYMENT_API_KEY", "sent to the provider in `X-Api-Key` on every query, so credentials need not live in the URL; never logged (URLs are logged with their password redacted). Unset: no header",
		func(c *config) *string { return &c.PaymentAPIKey }),
	withUnset(yesNo("SECKILL_PAYMENT_REQUIRE_TIMESTAMP", true, "`true` refuses callbacks signed over the body alone: only the timestamped signature, valid 5 minutes, is accepted. Unset: `true`, `false` with `SECKILL_STRICT=false`; `false` is refused unless `SECKILL_STRICT=false`",
		func(c *config) *bool { return &c.PaymentRequireTimestamp }), func(c *config) string { return strconv.FormatBool(c.Strict) }).
		secure(refuse, func(c config) string {
			return when(!c.PaymentRequireTimestamp && (c.Strict || c.PaymentURL != ""), "SECKILL_PAYMENT_REQUIRE_TIMESTAMP=false accepts callbacks signed over the body alone, which a captured callback replays")
		}),

	// Order events.
	choice("SECKILL_EVENTS", eventsRedis, "where order events go (docs/API.md, \"Order events\"; docs/DEPLOY.md): `redis` (a stream in the service's Redis), `kafka`, or `off` (the outbox rows are written for change data capture, not relayed)",
		"redis, kafka or off", func(c *config) *string { return &c.Events.Sink }, eventsRedis, eventsKafka, eventsOff),
	withUnset(word("SECKILL_EVENTS_STREAM", "<SECKILL_KEY_PREFIX>events", "the Redis stream the events are appended to",
		func(c *config) *string { return &c.Events.Stream }, nil), func(c *config) string { return c.KeyPrefix + "events" }),
	count("SECKILL_EVENTS_STREAM_MAXLEN", 1000000, 1000, 1<<30, "stream entries", "the stream is trimmed to about this many entries (at least `1000`)",
		func(c *config) *int { return &c.EventsStreamMaxLen }),
	custom("SECKILL_EVENTS_KAFKA_BROKERS", "", "Kafka brokers, `host:port` comma-separated; required with `SECKILL_EVENTS=kafka`", readBrokers),
	word("SECKILL_EVENTS_KAFKA_TOPIC", "seckill.orders", "the Kafka topic (record key: the order id; acks from all in-sync replicas; idempotent producer)",
		func(c *config) *string { return &c.Events.KafkaTopic }, nil),
	yesNo("SECKILL_EVENTS_KAFKA_TLS", false, "`true`: the Kafka producer and `events tail` connect with TLS, verifying the brokers' certificates (the system's roots, or `SECKILL_EVENTS_KAFKA_TLS_CA_FILE`)",
		func(c *config) *bool { return &c.Events.Kafka.TLS }),
	word("SECKILL_EVENTS_KAFKA_TLS_CA_FILE", "", "a PEM file of the CA(s) that sign the brokers' certificates, with `SECKILL_EVENTS_KAFKA_TLS=true`. Unset: the system's roots",
		func(c *config) *string { return &c.Events.Kafka.CAFile }, nil),
	custom("SECKILL_EVENTS_KAFKA_SASL_MECHANISM", "", "`plain`, `scram-sha-256` or `scram-sha-512`: SASL authentication to the brokers, with `_SASL_USER` and `_SASL_PASSWORD`; under the secure defaults `plain` needs TLS to a broker that is not loopback. Unset: no SASL", readSASLMechanism).secure(refuse, kafkaPlainInClear),
	text("SECKILL_EVENTS_KAFKA_SASL_USER", "the SASL user. Unset: none",
		func(c *config) *string { return &c.Events.Kafka.User }),
	text("SECKILL_EVENTS_KAFKA_SASL_PASSWORD", "the SASL password (never logged). Unset: none",
		func(c *config) *string { return &c.Events.Kafka.Password }),
	duration("SECKILL_EVENTS_RETENTION", 24*time.Hour, time.Minute, "sent events are deleted from the outbox table after this (at least `1m`); with `off`, events written this long ago",
		func(c *config) *time.Duration { return &c.EventsRetention }),

	// Operations.
	duration("SECKILL_BOOKS_SWEEP", 5*time.Second, 0, "how often each instance checks the books of open activities and, where a crash left Redis's stock off from `total - sold` in two checks running, repairs it under the activity's lock and fence (docs/DESIGN.md); `0` turns it off",
		func(c *config) *time.Duration { return &c.BooksSweep }),
	duration("SECKILL_SHUTDOWN_TIMEOUT", 15*time.Second, 0, "on SIGTERM, how long in-flight requests may finish",
		func(c *config) *time.Duration { return &c.ShutdownTimeout }),
	custom("SECKILL_LOG_LEVEL", "info", "`debug`, `info`, `warn`, `error`", readLogLevel),
	choice("SECKILL_LOG_FORMAT", "json", "`json` or `text` (to stderr)", "json or text", func(c *config) *string { return &c.LogFormat }, "json", "text"),
}

// custom is a trimmed setting read by read.
func custom(name, def, meaning string, read func(c *config, e *envReader, v string)) setting {
	return setting{name: name, def: def, meaning: meaning, read: read}
}

// with replaces a setting's read.
func (s setting) with(read func(c *config, e *envReader, v string)) setting {
	s.read = read
	return s
}

// withUnset gives a setting a default that depends on the settings above it.
func withUnset(s setting, unset func(c *config) string) setting {
	s.unset = unset
	return s
}

// optional skips check for an unset value.
func optional(check func(string) error) func(string) error {
	return func(v string) error {
		if v == "" {
			return nil
		}
		return check(v)
	}
}

func readRedisURL(c *config, e *envReader, v string) {
	c.RedisURL = v
	if v == "" || !knownRedisMode(c.RedisMode) {
		return
	}
	var err error
	if c.Redis, err = parseRedis(c.RedisMode, v); err != nil {
		e.fail(err)
	}
}

func knownRedisMode(m string) bool {
	return m == redisSingle || m == redisCluster || m == redisSentinel
}

// readKeyPrefix refuses a brace: it would change the hash tag {act:N} that
// keeps each activity's keys in one Cluster slot (Redis hashes the first
// {...} of a key).
func readKeyPrefix(c *config, e *envReader, v string) {
	c.KeyPrefix = v
	if strings.ContainsAny(v, "{}") {
		e.fail(fmt.Errorf("SECKILL_KEY_PREFIX=%q: must not contain { or }: it would move activities' keys to other Cluster slots", v))
	}
}

func readDSN(name string, to func(*config) *string) func(c *config, e *envReader, v string) {
	return func(c *config, e *envReader, v string) {
		*to(c) = v
		if v == "" {
			return
		}
		if err := checkMySQLDSN(name, v); err != nil {
			e.fail(err)
		}
	}
}

func readMigrations(c *config, e *envReader, v string) {
	switch v = strings.ToLower(v); v {
	case migrationsApply:
	case migrationsSkip:
		c.SkipMigrations = true
	default:
		e.fail(fmt.Errorf("SECKILL_MIGRATIONS=%q: must be %s (serve applies pending migrations) or %s (serve only checks the schema is current; run `seckill migrate` first)", v, migrationsApply, migrationsSkip))
	}
}

func readLogLevel(c *config, e *envReader, v string) {
	if c.LogLevel.UnmarshalText([]byte(v)) != nil {
		e.fail(fmt.Errorf("SECKILL_LOG_LEVEL=%q: must be debug, info, warn or error", v))
	}
}

func readBrokers(c *config, _ *envReader, v string) {
	for _, b := range strings.Split(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Events.KafkaBrokers = append(c.Events.KafkaBrokers, b)
		}
	}
}

func readUserCheck(c *config, e *envReader, v string) {
	switch v {
	case "":
	case "approve-all":
		c.ApproveAll = true
	default:
		e.fail(fmt.Errorf("SECKILL_USERCHECK=%q: the only value is approve-all", v))
	}
}

// readIdentity reads SECKILL_IDENTITY, after SECKILL_IDENTITY_SECRET.
func readIdentity(c *config, e *envReader, v string) {
	switch v {
	case "":
	case identityTrustedGateway:
		c.TrustedGateway = true
		if c.IdentitySecret != "" {
			e.fail(errors.New("SECKILL_IDENTITY=trusted-gateway and SECKILL_IDENTITY_SECRET are both set: with a secret X-User-ID is signed, not trusted; unset one"))
		}
	default:
		e.fail(fmt.Errorf("SECKILL_IDENTITY=%q: the only value is %s (X-User-ID trusted unsigned: only the gateway reaches the port)", v, identityTrustedGateway))
	}
}

// minIdentitySecret is the shortest SECKILL_IDENTITY_SECRET accepted even
// with SECKILL_STRICT=false: one signed header is enough to guess a short
// key offline (the secure defaults want minStrictSecret).
const minIdentitySecret = 16

// readIdentitySecret reads the gateway's identity secret, never logged.
func readIdentitySecret(c *config, e *envReader, v string) {
	c.IdentitySecret = v
	if v != "" && len(v) < minIdentitySecret {
		e.fail(fmt.Errorf("SECKILL_IDENTITY_SECRET is %d bytes: it must be at least %d (or unset: the gateway's X-User-ID is trusted unsigned)", len(v), minIdentitySecret))
	}
}
