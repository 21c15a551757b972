#!/usr/bin/env bash
# walkthrough.sh runs the ten commands of docs/DEPLOY.md ("One instance on
# your own Redis and MariaDB") as written there, so the walkthrough cannot
# rot: on free ports, a database, a user and a Redis key prefix of its own
# (the only changes made to the lines), against the Redis and MariaDB that
# scripts/services.sh runs. It checks that the order ends paid, the audit is
# consistent and the reconcile changed nothing, and cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."

block=$(sed -n '/<!-- walkthrough:begin -->/,/<!-- walkthrough:end -->/p' docs/DEPLOY.md | sed '/^<!--/d; /^```/d')
[ "$(printf '%s\n' "$block" | grep -c .)" = 10 ] || { echo "walkthrough: docs/DEPLOY.md's block is not ten commands" >&2; exit 1; }

# shellcheck source=loadtest/lib.sh
source loadtest/lib.sh # free_port
run=w$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
http=$(free_port) pay=$(free_port)
work=$(mktemp -d)
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null || true
	wait 2>/dev/null || true
	mariadb -uroot -e "DROP DATABASE IF EXISTS seckill_$run; DROP USER IF EXISTS '$run'@'127.0.0.1'" || true
	redis-cli --scan --pattern "$run:*" | xargs -r redis-cli DEL >/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

script=$(printf '%s\n' "$block" | sed \
	-e "s|127.0.0.1:8080|127.0.0.1:$http|g" -e "s|127.0.0.1:8082|127.0.0.1:$pay|g" \
	-e "s|DATABASE IF NOT EXISTS seckill;|DATABASE IF NOT EXISTS seckill_$run;|" -e "s|ON seckill\.\*|ON seckill_$run.*|" \
	-e "s|'seckill'@|'$run'@|g" -e "s|seckill:change-me@tcp(127.0.0.1:3306)/seckill?|$run:change-me@tcp(127.0.0.1:3306)/seckill_$run?|" \
	-e "s|SECKILL_KEY_PREFIX=shop1:|SECKILL_KEY_PREFIX=$run:|" -e "s|/tmp/seckill|$work/seckill|g")
# The doc leaves the stub and the service running; here they stop at the end.
out=$(bash -e -c "$script"$'\nkill $(jobs -p); wait' 2>"$work/stderr") || { cat "$work/stderr" >&2; echo "walkthrough: a command failed" >&2; exit 1; }
printf '%s\n' "$out"
grep -q '"status":"paid"' <<<"$out" || { tail -20 "$work/stderr" >&2; echo "walkthrough: the order did not end paid" >&2; exit 1; }
grep -q '"consistent":true' <<<"$out" || { echo "walkthrough: the audit is not consistent" >&2; exit 1; }
grep -q '"changed": false' <<<"$out" || { echo "walkthrough: the reconcile changed the stock" >&2; exit 1; }
echo "walkthrough: ten commands, a paid order, a consistent audit, a reconcile that changed nothing"
