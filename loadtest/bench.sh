#!/usr/bin/env bash
# bench.sh measures one hot activity on the built service, over loopback,
# against the real Redis and MariaDB: how many durable orders a second it
# takes as the crowd grows, and how a crowd's first presses are answered.
#
#   1. builds the service, makes sure Redis and MariaDB run
#      (scripts/services.sh), installs wrk (Debian) when missing;
#   2. creates a database and a Redis key prefix of this run's own, and
#      starts one instance (user verification: approve-all by default, or
#      the stub with --verify stub);
#   3. for each concurrency: a fresh activity of --stock units, then
#      `wrk -t2 -cC -dD` where every request is a distinct buyer and nothing
#      is retried (loadtest/bench.lua); orders are counted in SQL;
#   4. the crowd: --crowd buyers press "buy" once, at the same moment, for
#      --crowd-stock units (loadtest/crowd): the share of first answers that
#      are final (201 or 409 sold_out); --crowd 0 skips it;
#   5. checks the books of every activity with `seckill books` (orders +
#      Redis == total, no user twice, activities.sold == rows) and prints
#      Markdown tables (the figures, ratios and batch timeline from
#      loadtest/metrictable).
#
# usage: loadtest/bench.sh [--conns "4 64 256"] [--duration 15s] [--stock N]
#                          [--activities "1 20 200"] [--instances "1 3"] [--floor]
#                          [--pprof] [--verify approve|stub] [--crowd N] [--crowd-stock N]
#                          [--env "NAME=VALUE ..."] [--galera] [--keep] [--seckill BIN]
#                          [--db-prefix P] [--quantity K] [--join]
#                          [--reference [--pairs N] [--reference-dir DIR]]
# --reference measures floorref (../shared/floorref, the minimal durable
# order) alternated with the service, --pairs times (2), at one --conns (64)
# for --duration (10s): REFERENCE lines of both and their ratios, a pair's
# each and the pairs' median (loadtest/reference.sh says how).
# --join measures waiting-room joins instead of purchases: each activity gets
# a room that opened a minute ago and a start 30 minutes ahead, and every
# request is a distinct user's POST .../queue (the storm at a room's opening:
# pre-queue places, the draw); with --floor the costs table gives the
# service's µs per join ÷ per /healthz (issue 49's join row). Durable orders
# then read 0; give --crowd 0 to skip the purchase crowd.
# --quantity K sends {"quantity":K} with every purchase (default: no body,
# one unit), on activities with per_user_limit K when K is above 1; the
# stock is then --stock units, K a buyer. --quantity 1 sends the body to a
# build of any date (one before quantities accepts quantity 1 only).
# --db-prefix P names the run's database P<run id> (default seckill_bench_): the
# scripts' own MariaDB user (scripts/services.sh) may create seckill_*
# databases only; another prefix needs SECKILL_DB_USER and
# SECKILL_DB_PASSWORD of a user of yours that may.
# --activities runs each concurrency once per count of hot activities, the
# requests spread round-robin over that many fresh activities, and reports
# each run's orders/s against the one-activity run's (the many-items ratio).
# --instances runs each concurrency once per count of service instances (on
# the same database and Redis), the connections split evenly, one wrk process
# per instance, and reports orders/s against the one-instance run's (the
# scale-out ratio); p50 and p99 are then the worst instance's.
# Every run also reads where the batches' time went from the first instance's
# seckill_purchase_batch_step_seconds (the batch timeline), and with --pprof
# takes a CPU profile of the first instance over the first run at 64
# connections (or the first concurrency) into loadtest/out/logs-bench/.
# --floor also measures `GET /healthz` at each concurrency on the same
# instance, and reports orders/s against it (the HTTP floor's ratio).
# Every run reads the CPU of each process (utime + stime of /proc/PID/stat,
# before and after): the service's instances, MariaDB (every mariadbd here),
# the Redis it reads, and wrk; and prints it per 2xx answer, in µs (the
# BENCH_CPU line, and the CPU table at the end). With --floor the /healthz
# run is measured the same way, and the table gives the service's µs per
# purchase ÷ per /healthz. CPU time per answer is the steady figure on a
# shared machine: throughput moves with the neighbours, this much less.
# --seckill BIN runs that build of the service instead of building this
# tree's (another commit's, built apart: a before and after in one sitting).
# --galera puts the order store on the loopback 3-node MariaDB Galera cluster
# behind HAProxy (scripts/galera.sh, started when it is not running) instead
# of the single MariaDB on 3306.
# --env passes settings to the service (repeatable), over the bench's own:
# e.g. --env "SECKILL_REDIS_URL=redis://127.0.0.1:7100/0
# SECKILL_REDIS_WAIT_REPLICAS=1" runs it on a primary with a replica and
# WAITs for it (docs/DEPLOY.md). The bench reads that Redis directly, so
# SECKILL_REDIS_URL must name one node (SECKILL_REDIS_MODE single).
# Every run also follows the order events (docs/DEPLOY.md): the first instance's
# seckill_events_oldest_pending_seconds read every 0.5 s while wrk runs (its
# p99 and max; the gauge is the backlog of every instance, measured once a
# second), and the outbox rows of the run's activities still unsent 2 s
# after wrk stopped (SQL): the events columns of the runs and the Events
# table. With --env SECKILL_EVENTS=off they read "-" (nothing is relayed).
# Exits 0 when the books balance, 1 when they do not; the speed figures are
# reported, not judged (a shared 2-core machine is too noisy to gate on).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

db_prefix=seckill_bench_ conns="4 64 256" activities=1 instances=1 pprof=0 floor=0 duration=15s stock=1000000 verify=approve crowd=3000 crowd_stock=1000 keep=0 extra_env=() db_port=3306 seckill_bin="" quantity="" join=0
reference=0 reference_dir=../shared/floorref pairs=2 conns_given=0 duration_given=0
die() { echo "bench.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--conns) conns=${2:?} conns_given=1; shift 2 ;;
	--activities) activities=${2:?}; shift 2 ;;
	--instances) instances=${2:?}; shift 2 ;;
	--pprof) pprof=1; shift ;;
	--floor) floor=1; shift ;;
	--duration) duration=${2:?} duration_given=1; shift 2 ;;
	--stock) stock=${2:?}; shift 2 ;;
	--verify) verify=${2:?}; shift 2 ;;
	--crowd) crowd=${2:?}; shift 2 ;;
	--crowd-stock) crowd_stock=${2:?}; shift 2 ;;
	--env) read -ra kvs <<<"${2:?}"; extra_env+=("${kvs[@]}"); shift 2 ;;
	--keep) keep=1; shift ;;
	--seckill) seckill_bin=${2:?}; shift 2 ;;
	--quantity) quantity=${2:?}; [[ "$quantity" =~ ^[1-9][0-9]?$|^100$ ]] || die "--quantity takes 1..100, not $quantity"; shift 2 ;;
	--db-prefix) db_prefix=${2:?}; [[ "$db_prefix" =~ ^[A-Za-z0-9_]{1,40}$ ]] || die "--db-prefix takes letters, digits and _ (at most 40), not $db_prefix"; shift 2 ;;
	--galera) db_port=3310; shift ;;
	--join) join=1; shift ;;
	--reference) reference=1; shift ;;
	--reference-dir) reference_dir=${2:?}; shift 2 ;;
	--pairs) pairs=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
case "$verify" in approve | stub) ;; *) die "--verify must be approve or stub" ;; esac
[[ "$crowd" =~ ^[0-9]+$ ]] || die "--crowd takes a count of buyers (0 skips the crowd), not $crowd"
[[ "$crowd_stock" =~ ^[1-9][0-9]*$ ]] || die "--crowd-stock takes a positive count of units, not $crowd_stock"
crowd=$((10#$crowd))
max_instances=1
for n in $instances; do
	[[ "$n" =~ ^[1-9][0-9]?$ ]] || die "--instances takes counts from 1 to 99, not $n"
	[ "$n" -gt "$max_instances" ] && max_instances=$n
done
redis_url=redis://127.0.0.1:6379/0 events=redis
for kv in "${extra_env[@]}"; do
	case "$kv" in
	*=*) ;;
	*) die "--env: $kv is not NAME=VALUE" ;;
	esac
	case "$kv" in
	SECKILL_REDIS_URL=*) redis_url=${kv#*=} ;;
	SECKILL_EVENTS=*) events=${kv#*=} ;;
	SECKILL_REDIS_MODE=*) [ "${kv#*=}" = single ] || die "--env: the bench reads Redis directly; give SECKILL_REDIS_URL of one node" ;;
	esac
done
redis_node=${redis_url#redis://}
redis_node=${redis_node##*@}
redis_node=${redis_node%%/*}
redis_node=${redis_node%%\?*}
# shellcheck source=reference.sh
source loadtest/reference.sh
[ "$reference" = 0 ] || reference_args

# shellcheck source=lib.sh
source loadtest/lib.sh
open_logs bench

pids=() db="" prefix="" failed=1
redis() { redis-cli -h "${redis_node%:*}" -p "${redis_node##*:}" "$@"; }
sql() { mariadb -h 127.0.0.1 -P "$db_port" -u"$db_user" -p"$db_pass" -N -B "$@"; }
cleanup() {
	stop_pids
	[ "$reference" = 0 ] || reference_cleanup
	kept_for_inspection && return
	[ -z "$db" ] || sql -e "DROP DATABASE IF EXISTS \`$db\`" 2>/dev/null || true
	if [ -n "$prefix" ]; then
		# UNLINK in batches: one redis-cli per key took minutes after a
		# 200-activity run (every grant leaves a receipt key).
		redis --scan --pattern "${prefix}*" 2>/dev/null |
			xargs -r -d '\n' -n 500 redis-cli -h "${redis_node%:*}" -p "${redis_node##*:}" UNLINK >/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. build, services, wrk ------------------------------------------------
# shellcheck source=../scripts/services.sh
source scripts/services.sh
services_ensure wrk jq curl >&2
if [ "$db_port" = 3310 ]; then
	services_galera >&2 || die "the Galera cluster did not start (scripts/galera.sh)"
fi
command -v wrk >/dev/null || die "wrk is needed (apt-get install wrk)"
db_user=$SECKILL_DB_USER db_pass=$SECKILL_DB_PASSWORD # services_ensure set them
# The Galera cluster is scripts/galera.sh's own, with a user of its own.
[ "$db_port" != 3310 ] || db_user=seckill db_pass=seckill
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
log "building the service, the crowd and the figures' tool"
if [ -n "$seckill_bin" ]; then
	cp "$seckill_bin" "$logs/seckill" || die "--seckill: cannot copy $seckill_bin"
else
	go build -o "$logs/seckill" ./cmd/seckill
fi
go build -o "$logs/metrictable" ./loadtest/metrictable
metrictable=$logs/metrictable runs=$logs/runs.txt
[ "$crowd" = 0 ] || go build -o "$logs/crowd" ./loadtest/crowd
[ "$reference" = 0 ] || reference_build

# ---- 2. database, prefix, instance ------------------------------------------
new_namespace bench "$db_port"
# approve: no user check, on purpose (the secure defaults want it said).
uc_env=(SECKILL_USERCHECK=approve-all)
[ "$verify" = stub ] && start_userstub
bases=() admins=() svc_pids=()
for k in $(seq "$max_instances"); do
	port=$(free_port) admin_port=$(free_port)
	while [ "$admin_port" = "$port" ]; do admin_port=$(free_port); done
	env SECKILL_HTTP_ADDR="127.0.0.1:$port" SECKILL_ADMIN_ADDR="127.0.0.1:$admin_port" SECKILL_REDIS_URL="$redis_url" \
		SECKILL_MYSQL_DSN="$dsn" SECKILL_ADMIN_TOKEN="$admin_token" SECKILL_KEY_PREFIX="$prefix" SECKILL_LOG_LEVEL=error \
		"${uc_env[@]}" "${extra_env[@]}" "$logs/seckill" serve >"$logs/seckill-$k.log" 2>&1 &
	svc_pids+=($!)
	pids+=($!)
	bases+=("http://127.0.0.1:$port") admins+=("http://127.0.0.1:$admin_port")
	wait_http "${bases[-1]}/readyz" "seckill-$k" 30 "${svc_pids[-1]}"
done
base=${bases[0]} admin=${admins[0]} svc_pid=${svc_pids[0]}
# The processes whose CPU each run reads from /proc (cpu_ticks): every
# instance, the MariaDB server the bench writes to (its pid file, when it is
# on this machine; with --galera, or without a readable pid file, every
# MariaDB server here: a Galera cluster or a fault campaign on the box then
# counts too) and the Redis the bench reads; the load generator's is its
# own (purchases).
db_pids=()
if [ "$db_port" = 3306 ]; then
	db_pidfile=$(sql -e 'SELECT @@pid_file' 2>/dev/null || true)
	[ ! -r "$db_pidfile" ] || db_pids=("$(cat "$db_pidfile")")
fi
[ ${#db_pids[@]} -gt 0 ] || mapfile -t db_pids < <(pgrep -x mariadbd || pgrep -x mysqld || true)
redis_pid=$(redis INFO server | awk -F: '/^process_id:/ {print $2 + 0}')
[ ${#db_pids[@]} -gt 0 ] || log "no mariadbd on this machine: its CPU reads 0"
[ -r "/proc/${redis_pid:-0}/stat" ] || log "Redis's process ${redis_pid:-?} is not on this machine: its CPU reads 0"
log "service $base (pid $svc_pid, $max_instances instance(s)), verification: $verify, database $db, Redis $redis_node${extra_env[*]:+, settings: ${extra_env[*]}}"

# An activity's per-buyer limit: only above 1 (a build before quantities
# knows no such field).
limit_field=""
[ "${quantity:-1}" = 1 ] || limit_field=",\"per_user_limit\":$quantity"
export BENCH_QUANTITY=$quantity
new_activity() { # stock -> id
	local now ends
	now=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ) ends=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
	curl -fsS -X POST "$admin/admin/v1/activities" -H "Authorization: Bearer $admin_token" \
		-d "{\"name\":\"bench\",\"total_stock\":$1,\"starts_at\":\"$now\",\"ends_at\":\"$ends\"$limit_field}" | jq -r .id
}
# new_room_activity stock -> id: an activity whose waiting room opened a
# minute ago and whose sale starts in 30 minutes (--join).
new_room_activity() {
	local opens starts ends
	opens=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ) starts=$(date -u -d '+30 minutes' +%Y-%m-%dT%H:%M:%SZ)
	ends=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
	curl -fsS -X POST "$admin/admin/v1/activities" -H "Authorization: Bearer $admin_token" \
		-d "{\"name\":\"bench\",\"total_stock\":$1,\"starts_at\":\"$starts\",\"ends_at\":\"$ends\",\"waiting_room\":{\"opens_at\":\"$opens\"}$limit_field}" | jq -r .id
}
rss_mb() { awk '/^VmRSS/ {printf "%d", $2 / 1024}' "/proc/$svc_pid/status"; }
# scrape FILE: the first instance's metrics, for the batch timeline
# (metrictable timeline BEFORE AFTER).
scrape() { curl -fsS "$admin/metrics" >"$1"; }

# cpu_now: the CPU ticks spent so far by the service's instances, MariaDB
# and Redis, as cpu_svc=, cpu_db= and cpu_redis= (cpu_since takes them).
cpu_now() { echo "$(cpu_ticks "${svc_pids[@]}") $(cpu_ticks "${db_pids[@]}") $(cpu_ticks "$redis_pid")"; }
# cpu_since PREFIX "BEFORE": the ticks spent since cpu_now said BEFORE, as
# PREFIXsvc= PREFIXdb= PREFIXredis= fields.
cpu_since() {
	local before now
	read -ra before <<<"$2"
	read -ra now <<<"$(cpu_now)"
	echo "${1}svc=$((now[0] - before[0])) ${1}db=$((now[1] - before[1])) ${1}redis=$((now[2] - before[2]))"
}

# purchases conns n_instances paths...: wrk against the first n instances,
# the connections split evenly, one wrk each; one BENCH line of the sums
# (p50 and p99: the worst instance's) and cpu_gen=, the wrk processes'
# CPU ticks.
purchases() {
	local c=$1 n=$2 k per threads out=() pid wpids=() gen0 gen1
	shift 2
	per=$((c / n)) threads=2
	[ "$n" -gt 1 ] && threads=1
	[ "$per" -ge "$threads" ] || die "--conns $c is too few for $n instances"
	children_ticks gen0
	for k in $(seq 0 $((n - 1))); do
		out+=("$logs/wrk-$k.out")
		BENCH_USER_BASE=$((k * 10000000000)) wrk -t"$threads" -c"$per" -d"$duration" --timeout 10s \
			-s loadtest/bench.lua "${bases[$k]}" -- "$@" >"${out[-1]}" &
		wpids+=($!)
	done
	for pid in "${wpids[@]}"; do wait "$pid"; done
	children_ticks gen1
	echo "$("$metrictable" wrk "${out[@]}") cpu_gen=$((gen1 - gen0))"
}

# healthz conns: GET /healthz with wrk on the first instance, as
# hz_per_s= (answers a second), hz_ok= (2xx answers) and the CPU ticks of
# the service, MariaDB, Redis and wrk as hz_svc= hz_db= hz_redis= hz_gen=.
healthz() {
	local cpu0 gen0 gen1 wrk_out
	cpu0=$(cpu_now)
	children_ticks gen0
	wrk_out=$(wrk -t2 -c"$1" -d"$duration" --timeout 10s "$base/healthz")
	children_ticks gen1
	echo "$(cpu_since hz_ "$cpu0") hz_gen=$((gen1 - gen0)) $("$metrictable" plain <<<"$wrk_out")"
}

# events_sampler FILE: the first instance's
# seckill_events_oldest_pending_seconds, one line every 0.5 s, until killed.
events_sampler() {
	while sleep 0.5; do
		curl -fsS --max-time 1 "$admin/metrics" 2>/dev/null | awk '/^seckill_events_oldest_pending_seconds / {print $2}' >>"$1" || true
	done
}
# events_fields SAMPLES IDS: events_p99_s= and events_max_s= of the samples
# (nearest rank), and events_pending_2s=, the run's unsent outbox rows now;
# "-" each with SECKILL_EVENTS=off.
events_fields() {
	if [ "$events" = off ]; then
		echo "events=off events_p99_s=- events_max_s=- events_pending_2s=-"
		return
	fi
	local p99 mx pending
	read -r p99 mx < <(sort -g "$1" | awk '{v[NR] = $1} END {if (NR == 0) {print "- -"; exit} i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; printf "%.2f %.2f\n", v[i], v[NR]}')
	pending=$(sql "$db" -e "SELECT COUNT(*) FROM order_events e WHERE activity_id IN ($2) AND (sent_at IS NULL OR sent_at = '1970-01-01 00:00:00' OR (sent_at = '1970-01-01 00:00:01' AND EXISTS (SELECT 1 FROM order_event_batches b WHERE b.id = e.batch AND b.sent_at = '1970-01-01 00:00:00')))")
	echo "events=$events events_p99_s=$p99 events_max_s=$mx events_pending_2s=$pending"
}

# ---- 3. wrk at each concurrency ----------------------------------------------
# Every run appends one line of key=value to $runs: the tables and the
# ratios against the one-activity, one-instance and /healthz runs are
# metrictable's (loadtest/metrictable).
profiled=0 profile_at=64 prof_secs=5 clk_tck=$(getconf CLK_TCK)
# fields_value KEY LINE: the value of KEY= among LINE's fields.
fields_value() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
# The profile covers the run but its first and last second.
[[ "$duration" =~ ^([0-9]+)s$ ]] && prof_secs=$((BASH_REMATCH[1] > 3 ? BASH_REMATCH[1] - 2 : 1))
[[ " $conns " == *" 64 "* ]] || profile_at=${conns%% *}
# floor_run conns: GET /healthz at that concurrency, as floor_line and
# floor_aps (answers a second) for the runs that follow.
floor_run() {
	floor_line=$(healthz "$1")
	floor_aps=$(fields_value hz_per_s "$floor_line")
	log "c=$1: GET /healthz $floor_aps answers/s ($floor_line)"
}
# bench_run conns instances activities: one run on fresh activities, its
# line appended to $runs (with floor_line, the last floor_run's, if any).
bench_run() {
	local c=$1 ni=$2 n=$3
	paths=()
	for _ in $(seq "$n"); do
		if [ "$join" = 1 ]; then
			paths+=("/api/v1/activities/$(new_room_activity "$stock")/queue")
		else
			paths+=("/api/v1/activities/$(new_activity "$stock")/orders")
		fi
	done
	ids=$(printf '%s\n' "${paths[@]}" | sed 's|.*/activities/\([0-9]*\)/.*|\1|' | paste -sd,)
	prof_pid=""
	if [ "$pprof" = 1 ] && [ "$profiled" = 0 ] && [ "$c" = "$profile_at" ]; then
		profiled=1
		curl -fsS -H "Authorization: Bearer $admin_token" -o "$logs/cpu-c$c-a$n-i$ni.pprof" "$admin/debug/pprof/profile?seconds=$prof_secs" &
		prof_pid=$!
	fi
	scrape "$logs/metrics-before.prom"
	: >"$logs/events-samples.txt"
	events_sampler "$logs/events-samples.txt" &
	sampler_pid=$!
	cpu0=$(cpu_now)
	line=$(purchases "$c" "$ni" "${paths[@]}")
	cpu=$(cpu_since cpu_ "$cpu0")
	kill "$sampler_pid" 2>/dev/null || true
	wait "$sampler_pid" 2>/dev/null || true
	rss=$(rss_mb)
	sleep 1 # purchases still in flight when wrk stopped finish
	scrape "$logs/metrics-after.prom"
	sleep 1 # the backlog is read 2 s after the load stopped
	ev=$(events_fields "$logs/events-samples.txt" "$ids")
	tl=$("$metrictable" timeline "$logs/metrics-before.prom" "$logs/metrics-after.prom")
	if [ -n "$prof_pid" ]; then
		wait "$prof_pid" || log "the CPU profile could not be taken"
		go tool pprof -top -nodecount=25 "$logs/seckill" "$logs/cpu-c$c-a$n-i$ni.pprof" >"$logs/cpu-c$c-a$n-i$ni-top.txt" 2>/dev/null &&
			log "CPU profile: $logs/cpu-c$c-a$n-i$ni-top.txt"
	fi
	orders=$(sql "$db" -e "SELECT COUNT(*) FROM orders WHERE activity_id IN ($ids)")
	echo "conns=$c instances=$ni activities=$n orders=$orders rss_mb=$rss healthz_per_s=${floor_aps:--} ${line#BENCH } $cpu clk_tck=$clk_tck $floor_line $tl $ev" >>"$runs"
	log "c=$c instances=$ni activities=$n: $line orders_db=$orders rss=${rss}MB $cpu $tl $ev"
	"$metrictable" ratio "$runs" >&2
	"$metrictable" cost "$runs" >&2
	echo "BENCH_STEPS conns=$c instances=$ni activities=$n $tl" >&2
}
if [ "$reference" = 1 ]; then
	reference_pairs
else
	for c in $conns; do
		floor_aps="" floor_line=""
		[ "$floor" = 0 ] || floor_run "$c"
		for ni in $instances; do
			for n in $activities; do bench_run "$c" "$ni" "$n"; done
		done
	done
fi

# ---- 4. the crowd ------------------------------------------------------------
crowd_line=""
if [ "$crowd" = 0 ]; then
	log "crowd: skipped (--crowd 0)"
else
	crowd_act=$(new_activity "$crowd_stock")
	crowd_line=$("$logs/crowd" -url "$base" -activity "$crowd_act" -buyers "$crowd" -first-user 5000000000)
	log "crowd: $crowd_line"
fi

# ---- 5. books ----------------------------------------------------------------
books_rc=0
read_books "$logs/seckill" SECKILL_REDIS_URL="$redis_url" SECKILL_MYSQL_DSN="$dsn" SECKILL_KEY_PREFIX="$prefix" "${extra_env[@]}" || books_rc=$?
bad=() unread=$(books_unread "$books_rc")
if [ -n "$unread" ]; then
	bad+=("$unread")
else
	mapfile -t bad < <(jq -r '.violations[].message' "$logs/books.json")
	[ "$(jq '.activities | length' "$logs/books.json")" -gt 0 ] || bad+=("no activity could be read from database $db")
fi
echo
[ "$join" = 0 ] || echo "Waiting-room joins (--join): every request a distinct user's POST .../queue in a room before its start; \"orders\" read 0."
echo "Hot activities (requests round-robin over them), verification: $verify,${extra_env[*]:+ ${extra_env[*]},}${quantity:+ every purchase {\"quantity\":$quantity\},} wrk -t2 -d$duration (one wrk -t1 per instance when several), distinct buyers, no retries ($(nproc) cores shared by wrk, the service, Redis and MariaDB):"
echo
"$metrictable" orders "$runs"
echo
echo "CPU per 2xx answer, µs, of each process from /proc/PID/stat (utime + stime) over the run (the purchases, and GET /healthz with --floor); the generator is wrk; the service's ÷ /healthz is the issue-49 ratio:"
echo
"$metrictable" costs "$runs"
echo
echo "Batch timeline of the first instance (seckill_purchase_batch_step_seconds, mean ms per batch; verify includes the user checks, write the orders' transaction; write groups are the shared transactions, each carrying the batches of that many activities on average):"
echo
"$metrictable" steps "$runs"
echo
echo "Events (sink: $events): seckill_events_oldest_pending_seconds read every 0.5 s over each run, and the run's outbox rows unsent 2 s after the load stopped:"
echo
echo "| connections | instances | activities | durable orders/s | oldest pending p99 s | max s | unsent 2 s after |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2)}
	printf "| %s | %s | %s | %d | %s | %s | %s |\n", f["conns"], f["instances"], f["activities"], (f["duration_s"] > 0 ? f["orders"] / f["duration_s"] : 0), f["events_p99_s"], f["events_max_s"], f["events_pending_2s"]}' "$runs"
echo
if [ -z "$crowd_line" ]; then
	echo "Crowd: skipped (--crowd 0)."
else
	echo "Crowd of $crowd buyers for $crowd_stock units, one press each: $(jq -r '"\(.final_first_answers) final first answers (\(.final_share * 100 | floor)%), answers \(.codes | tostring), p50 \(.p50_ms) ms, p99 \(.p99_ms) ms"' <<<"$crowd_line")"
fi
if [ ${#bad[@]} -gt 0 ]; then
	printf 'BOOKS DO NOT BALANCE: %s\n' "${bad[@]}"
	exit 1
fi
echo "Books: every activity balances (orders + Redis remaining == total, sold == rows, no user twice)."
failed=0
