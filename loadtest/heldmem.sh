#!/usr/bin/env bash
# heldmem.sh measures what the waiting room's held requests cost one
# instance (loadtest/heldmem: memory per held request from VmRSS, and the
# instance's Redis commands/s while they are held, against none held):
#
#   1. builds the service and loadtest/heldmem into loadtest/out/logs-heldmem/;
#   2. creates a database and a Redis key prefix of this run's own on the
#      real MariaDB (127.0.0.1:3306, SECKILL_DB_USER or root) and Redis
#      (127.0.0.1:6379), and raises the open-file limit to its hard limit;
#   3. runs heldmem, which starts the one instance with these settings
#      (approve-all user check; every rate limit off, so the joins and the
#      held polls of one client address are not refused; SECKILL_ROOM_MAX_HELD
#      100000 unless set), joins the users and holds each count of requests;
#   4. drops the database and deletes the keys, unless heldmem failed.
#
# usage: loadtest/heldmem.sh [heldmem flags: -held 0,2000,5000,10000,15000
#                             -window 20s -wait 30s -rate 3000 ...]
# Each count needs that many open files in heldmem and in the instance
# (ulimit -Hn): the hard limit bounds the largest count, unless -h2c holds
# them as HTTP/2 streams, 250 a connection (a gateway's way). Its JSON lines go
# to loadtest/out/heldmem.json, the table to the terminal; the instance's
# heap profile at the largest count, still held, to
# loadtest/out/logs-heldmem/heap-held.pprof (go tool pprof -top -sample_index=inuse_space).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=lib.sh
source loadtest/lib.sh
open_logs heldmem

keep=0 failed=1 db="" prefix="" pids=()
db_user=${SECKILL_DB_USER:-root} db_pass=${SECKILL_DB_PASSWORD:-}
sql() { mariadb -h 127.0.0.1 -P 3306 -u"$db_user" ${db_pass:+-p"$db_pass"} -N -B "$@"; }
cleanup() {
	kept_for_inspection && return
	[ -z "$db" ] || sql -e "DROP DATABASE IF EXISTS \`$db\`" 2>/dev/null || true
	if [ -n "$prefix" ]; then
		redis-cli -h 127.0.0.1 -p 6379 --scan --pattern "${prefix}*" 2>/dev/null |
			xargs -r -d '\n' -n 500 redis-cli -h 127.0.0.1 -p 6379 UNLINK >/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sql -e 'SELECT 1' >/dev/null || { log "cannot reach MariaDB at 127.0.0.1:3306 as $db_user"; exit 2; }
redis-cli -h 127.0.0.1 -p 6379 PING | grep -q PONG || { log "cannot reach Redis at 127.0.0.1:6379"; exit 2; }
ulimit -n "$(ulimit -Hn)"
log "open files: $(ulimit -n) (hard $(ulimit -Hn)); building the service and heldmem"
go build -o "$logs/seckill" ./cmd/seckill
go build -o "$logs/heldmem" ./loadtest/heldmem

run_id="$(date -u +%Y%m%d%H%M%S)_$$"
db="seckill_heldmem_$run_id" prefix="heldmem${run_id}:"
sql -e "CREATE DATABASE \`$db\`"
export SECKILL_MYSQL_DSN="$db_user:$db_pass@tcp(127.0.0.1:3306)/$db?parseTime=true"
export SECKILL_KEY_PREFIX="$prefix" SECKILL_LOG_LEVEL="${SECKILL_LOG_LEVEL:-warn}"
export SECKILL_ADMIN_TOKEN="heldmem-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
# approve-all: no user check, on purpose (the secure defaults want it said).
export SECKILL_USERCHECK=approve-all SECKILL_RATE_GLOBAL=0 SECKILL_RATE_PER_USER=0 \
	SECKILL_RATE_PER_USER_READS=0 SECKILL_RATE_JOINS_PER_ADDRESS=0
export SECKILL_ROOM_MAX_HELD="${SECKILL_ROOM_MAX_HELD:-100000}"
log "database $db, prefix $prefix"

"$logs/heldmem" -seckill "$logs/seckill" -log "$logs/seckill.log" -heap-profile "$logs/heap-held.pprof" "$@" | tee "$out_dir/heldmem.json"
failed=0
