#!/usr/bin/env bash
# walkthrough.sh runs the eleven commands of docs/DEPLOY.md ("One instance on
# your own Redis and MariaDB") as written there, so the walkthrough cannot
# rot, against the Redis and MariaDB that scripts/services.sh runs. It walks
# twice: the second walk meets a server the first one filled (its database,
# user, keys and activity still there), as an operator's second try would.
# The only changes made to the lines: free ports, the walk's name chosen here
# (so it can clean up) and the binary in its own temporary folder. Each walk
# must stop at its first non-2xx and end with the order paid, the audit
# consistent and a reconcile that changed nothing. The second walk then runs
# the doc's clean-up lines, which must leave none of its database, user,
# keys or binary behind (the first walk's stay until this script's end).
set -euo pipefail
cd "$(dirname "$0")/.."

block=$(sed -n '/<!-- walkthrough:begin -->/,/<!-- walkthrough:end -->/p' docs/DEPLOY.md | sed '/^<!--/d; /^```/d')
[ "$(printf '%s\n' "$block" | grep -c .)" = 11 ] || { echo "walkthrough: docs/DEPLOY.md's block is not eleven commands" >&2; exit 1; }
cleanup_block=$(sed -n '/<!-- cleanup:begin -->/,/<!-- cleanup:end -->/p' docs/DEPLOY.md | sed '/^<!--/d; /^```/d')
[ -n "$cleanup_block" ] || { echo "walkthrough: docs/DEPLOY.md has no clean-up block (<!-- cleanup:begin -->)" >&2; exit 1; }
grep -q '^run=shop\$(openssl rand -hex 4);' <<<"$block" || { echo "walkthrough: the block's first line no longer names the walk run=shop\$(openssl rand -hex 4)" >&2; exit 1; }

# shellcheck source=loadtest/lib.sh
source loadtest/lib.sh # free_port
work=$(mktemp -d)
runs=()
cleanup() {
	local run
	jobs -p | xargs -r kill 2>/dev/null || true
	wait 2>/dev/null || true
	for run in "${runs[@]}"; do
		mariadb -uroot -e "DROP DATABASE IF EXISTS $run; DROP USER IF EXISTS '$run'@'127.0.0.1'" || true
		redis-cli --scan --pattern "$run:*" | xargs -r redis-cli DEL >/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

# walk N [clean]: one walk on ports of its own; with clean, the doc's
# clean-up lines after it.
walk() {
	local n=$1 clean=${2:-} run http user pay script out finish
	run=shop$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	runs+=("$run")
	http=$(free_port) user=$(free_port) pay=$(free_port)
	mkdir -p "$work/$n/bin"
	script=$(printf '%s\n' "$block" | sed \
		-e "s|127.0.0.1:8080|127.0.0.1:$http|g" -e "s|127.0.0.1:8081|127.0.0.1:$user|g" -e "s|127.0.0.1:8082|127.0.0.1:$pay|g" \
		-e "1s|^run=shop\$(openssl rand -hex 4);|run=$run;|" -e "1s|bin=\$(mktemp -d)/seckill|bin=$work/$n/bin/seckill|")
	# The doc leaves the stubs and the service running; here they stop at
	# the end, by the doc's clean-up lines or without them.
	finish='kill $(jobs -p); wait'
	[ -z "$clean" ] || finish=$cleanup_block
	out=$(bash -e -c "$script"$'\n'"$finish" 2>"$work/$n/stderr") || {
		printf '%s\n' "$out"
		tail -30 "$work/$n/stderr" >&2
		echo "walkthrough $n ($run): a command failed (a non-2xx answer stops the walk: see above)" >&2
		exit 1
	}
	printf '%s\n' "$out"
	grep -q '"status":"paid"' <<<"$out" || { tail -20 "$work/$n/stderr" >&2; echo "walkthrough $n: the order did not end paid" >&2; exit 1; }
	grep -q '"consistent":true' <<<"$out" || { echo "walkthrough $n: the audit is not consistent" >&2; exit 1; }
	grep -q '"changed": false' <<<"$out" || { echo "walkthrough $n: the reconcile changed the stock" >&2; exit 1; }
	echo "walkthrough $n ($run): eleven commands, a paid order, a consistent audit, a reconcile that changed nothing"
	[ -z "$clean" ] || cleaned "$n" "$run"
}

# cleaned N RUN: the doc's clean-up lines left nothing of walk N behind.
cleaned() {
	local n=$1 run=$2 left
	left=$(mariadb -uroot -N -e "SELECT CONCAT('database ', SCHEMA_NAME) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$run'
		UNION ALL SELECT CONCAT('user ', User, '@', Host) FROM mysql.user WHERE User = '$run'")
	left+=$(redis-cli --scan --pattern "$run:*" | sed 's/^/key /')
	[ ! -e "$work/$n/bin" ] || left+=$'\n'"binary folder $work/$n/bin"
	if [ -n "$left" ]; then
		printf 'walkthrough %s (%s): the clean-up lines left:\n%s\n' "$n" "$run" "$left" >&2
		exit 1
	fi
	echo "walkthrough $n ($run): the clean-up lines left no database, user, key or binary"
}

walk 1
# The second walk on the server the first one filled: its database, user,
# keys and activity are still there. It cleans up after itself as the doc
# says.
walk 2 clean
