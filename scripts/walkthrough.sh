#!/usr/bin/env bash
# walkthrough.sh runs the eleven commands of docs/DEPLOY.md ("One instance on
# your own Redis and MariaDB") as written there, so the walkthrough cannot
# rot, against the Redis and MariaDB that scripts/services.sh runs. It walks
# twice: the second walk meets a server the first one filled (its database,
# user, keys and activity still there), as an operator's second try would.
# The only changes made to the lines: free ports, the walk's name chosen here
# (so it can clean up) and the binary in its own temporary folder. Each walk
# must stop at its first non-2xx and end with the order paid, the audit
# consistent and a reconcile that changed nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

block=$(sed -n '/<!-- walkthrough:begin -->/,/<!-- walkthrough:end -->/p' docs/DEPLOY.md | sed '/^<!--/d; /^```/d')
[ "$(printf '%s\n' "$block" | grep -c .)" = 11 ] || { echo "walkthrough: docs/DEPLOY.md's block is not eleven commands" >&2; exit 1; }
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

# walk N: one walk on ports of its own.
walk() {
	local n=$1 run http user pay script out
	run=shop$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	runs+=("$run")
	http=$(free_port) user=$(free_port) pay=$(free_port)
	mkdir -p "$work/$n"
	script=$(printf '%s\n' "$block" | sed \
		-e "s|127.0.0.1:8080|127.0.0.1:$http|g" -e "s|127.0.0.1:8081|127.0.0.1:$user|g" -e "s|127.0.0.1:8082|127.0.0.1:$pay|g" \
		-e "1s|^run=shop\$(openssl rand -hex 4);|run=$run;|" -e "1s|bin=\$(mktemp -d)/seckill|bin=$work/$n/seckill|")
	# The doc leaves the stubs and the service running; here they stop at the end.
	out=$(bash -e -c "$script"$'\nkill $(jobs -p); wait' 2>"$work/$n/stderr") || {
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
}

walk 1
# The second walk on the server the first one filled: its database, user,
# keys and activity are still there.
walk 2
