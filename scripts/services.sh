#!/usr/bin/env bash
# services.sh makes sure the real Redis and MariaDB the tests and load tests run
# against are installed, running on loopback, and reachable over TCP by a
# dedicated database user. Idempotent: every step checks before it acts, and
# it never flushes, stops or restarts a server that is already running.
#
#   bash scripts/services.sh ensure   # prints `export ...` lines for the test env
#   source scripts/services.sh        # defines the functions; then: services_ensure
#
# It also runs the Redis topologies the scale-out tests need, from the same
# redis-server binary (no Docker), on loopback ports of their own, with data
# and config under $SECKILL_TOPOLOGY_DIR (default /tmp/seckill-redis-topologies),
# through cmd/redistopo (go run), the starter the fault campaign uses too:
#
#   bash scripts/services.sh topologies      # both; prints `export ...` lines
#   bash scripts/services.sh cluster         # 3 primaries + 3 replicas, 7000-7005
#   bash scripts/services.sh sentinel        # primary 7100, replica 7101, Sentinels 7102-7104
#   bash scripts/services.sh galera          # 3-node MariaDB Galera behind HAProxy (scripts/galera.sh)
#   bash scripts/services.sh stop-topologies # stops them all and removes their data
#
# Starting is idempotent: running nodes are left alone, a node that is down
# (a test killed it) is started again and rejoins as a replica.
#
# Needs root (or sudo) only when something must be installed or started.
# apt-get installs only what is named (--no-install-recommends), its output in
# a log file of its own ($SECKILL_STATE_DIR/apt.log), one line saying where.
#
# The database user the tests and load tests connect as (services_db_user):
# seckill_scripts@127.0.0.1 and @localhost, with every right on the databases
# named seckill_* (the scripts' and tests' own: seckill_t_, seckill_lt_,
# seckill_room_, seckill_bench_, seckill_chaos_...) and no other, its password
# generated once and kept in $SECKILL_STATE_DIR/mariadb-seckill_scripts.password
# (mode 0600); and seckill_scripts_rt@127.0.0.1, with no right at all, which
# the least-privilege test grants data rights on its own database for its
# length. An existing user is never altered: a user of that name whose
# password is not in the file is an error that says what to do.
#
# Tunables: SECKILL_DB_USER / SECKILL_DB_PASSWORD (a user of your own, used
# as it is, nothing created), SECKILL_STATE_DIR (default ~/.cache/seckill),
# SECKILL_SERVICES_WAIT (seconds to wait for MariaDB, default 30).

_svc_log() { printf 'services: %s\n' "$*" >&2; }

_svc_sudo() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n "$@"
	else
		_svc_log "need root for: $*"
		return 1
	fi
}

# _svc_state_dir prints (and makes, mode 0700) the scripts' own folder.
_svc_state_dir() {
	local dir=${SECKILL_STATE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/seckill}
	mkdir -p "$dir" && chmod 700 "$dir" && printf '%s\n' "$dir"
}

# services_apt_install installs Debian packages, non-interactively, without
# their recommends (gnuplot-nox's would bring ImageMagick and Ghostscript),
# its output into a log file of its own.
services_apt_install() {
	local log
	log="$(_svc_state_dir)/apt.log"
	_svc_log "installing $* (apt-get --no-install-recommends; its output in $log)"
	{
		printf '\n== %s apt-get install %s\n' "$(date -u +%FT%TZ)" "$*"
		_svc_sudo apt-get update -qq &&
			_svc_sudo env DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l apt-get install -y -qq --no-install-recommends "$@"
	} >>"$log" 2>&1 || { _svc_log "apt-get failed: see $log"; return 1; }
}

# services_install installs Redis and MariaDB when missing, in one apt-get
# run with any optional extra packages named (each wanted only when a command
# of that name is missing). Failing to install an extra is not an error.
services_install() {
	local servers=() extras=() pkg
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || servers+=(redis-server)
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || servers+=(mariadb-server)
	for pkg in "$@"; do
		command -v "$pkg" >/dev/null 2>&1 || extras+=("$pkg")
	done
	if [ ${#servers[@]} -eq 0 ] && [ ${#extras[@]} -eq 0 ]; then
		_svc_log "already installed: redis-server mariadb-server $*"
		return 0
	fi
	services_apt_install "${servers[@]}" "${extras[@]}" && return 0
	if [ ${#servers[@]} -gt 0 ]; then
		services_apt_install "${servers[@]}"
	else
		_svc_log "could not install optional ${extras[*]}"
	fi
}

services_redis() {
	if redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
		_svc_log "Redis answers on 127.0.0.1:6379"
		return 0
	fi
	_svc_log "starting Redis on 127.0.0.1:6379"
	redis-server ${conf:+"$conf"} --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >&2
	local i
	for i in $(seq 1 50); do
		redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	_svc_log "Redis did not answer within 5s"
	return 1
}

_svc_mariadb_up() { mariadb-admin --connect-timeout=2 ping >/dev/null 2>&1 || mariadb-admin --connect-timeout=2 -h 127.0.0.1 ping >/dev/null 2>&1; }

services_mariadb() {
	if _svc_mariadb_up; then
		_svc_log "MariaDB answers"
		return 0
	fi
	_svc_log "starting MariaDB"
	_svc_sudo mkdir -p /run/mysqld
	_svc_sudo chown mysql:mysql /run/mysqld
	_svc_sudo start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
	local wait=${SECKILL_SERVICES_WAIT:-30} i
	for i in $(seq 1 $((wait * 5))); do
		_svc_mariadb_up && { _svc_log "MariaDB is up"; return 0; }
		sleep 0.2
	done
	_svc_log "MariaDB did not answer within ${wait}s"
	return 1
}

# _svc_root_sql SQL runs SQL as MariaDB's root: through the unix socket (a
# fresh Debian MariaDB lets root in only there; TCP answers error 1698), or
# over TCP with an empty password where a set-up allows that.
# The way in is tried with a SELECT 1 first, so a statement that fails is
# never sent twice; the SQL goes on stdin, out of ps's sight (it may hold a
# password).
_svc_root_sql() {
	if [ -z "${_svc_root_way:-}" ]; then
		if _svc_sudo mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1; then
			_svc_root_way=socket
		elif mariadb -uroot -h 127.0.0.1 -P 3306 -e 'SELECT 1' >/dev/null 2>&1; then
			_svc_root_way=tcp
		else
			return 1
		fi
	fi
	if [ "$_svc_root_way" = socket ]; then
		_svc_sudo mariadb -uroot -N -B <<<"$1"
	else
		mariadb -uroot -h 127.0.0.1 -P 3306 -N -B <<<"$1"
	fi
}

# _svc_login USER PASSWORD: the user reaches MariaDB over TCP.
_svc_login() { MYSQL_PWD=$2 mariadb -u"$1" -h 127.0.0.1 -P 3306 -e 'SELECT 1' >/dev/null 2>&1; }

# _svc_password_for USER prints USER's password from its file, making one
# (and the file, mode 0600) when there is none yet.
_svc_password_for() {
	local file
	file="$(_svc_state_dir)/mariadb-$1.password"
	if [ ! -s "$file" ]; then
		(umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$file")
	fi
	cat "$file"
}

# _svc_ensure_user USER HOSTS [GRANT]: USER at each of HOSTS exists with the
# password of its file, created (with GRANT, as "RIGHTS ON WHAT" and what
# follows the TO clause) when no user of that name exists; an existing user
# is left as it is, and one that does not take the file's password is an
# error. A creation that fails half-way is undone.
_svc_ensure_user() {
	local u=$1 hosts=$2 rights=${3:-} with=${4:-} p file host exists sql="" undo=""
	p=$(_svc_password_for "$u") || return 1
	file="$(_svc_state_dir)/mariadb-$u.password"
	_svc_login "$u" "$p" && return 0
	exists=$(_svc_root_sql "SELECT COUNT(*) FROM mysql.user WHERE User='$u'") || {
		_svc_log "cannot create '$u': neither root over the unix socket nor root over TCP got in"
		return 1
	}
	if [ "$exists" != 0 ]; then
		_svc_log "MariaDB already has a user '$u' whose password is not the one in $file: it is left as it is."
		_svc_log "  Put its password in that file, or drop it (DROP USER '$u'@'127.0.0.1', '$u'@'localhost'), or set SECKILL_DB_USER and SECKILL_DB_PASSWORD to a user of yours."
		return 1
	fi
	for host in $hosts; do
		sql+="CREATE USER '$u'@'$host' IDENTIFIED BY '$p'; "
		[ -z "$rights" ] || sql+="GRANT $rights TO '$u'@'$host' $with; "
		undo+="DROP USER IF EXISTS '$u'@'$host'; "
	done
	if ! _svc_root_sql "$sql"; then
		_svc_root_sql "$undo" || true
		_svc_log "could not create MariaDB user '$u' (see above); nothing is left of it"
		return 1
	fi
	_svc_log "created MariaDB user '$u' (${rights:-no rights}); its password is in $file"
	_svc_login "$u" "$p"
}

# services_db_user makes sure of the database users the tests and load tests
# connect as (see the top of this file) and sets SECKILL_DB_USER and
# SECKILL_DB_PASSWORD, and SECKILL_TEST_MYSQL_RUNTIME_USER (name:password)
# for the least-privilege test. A caller's SECKILL_DB_USER and
# SECKILL_DB_PASSWORD are used as they are.
services_db_user() {
	if [ -n "${SECKILL_DB_USER:-}" ] && [ -n "${SECKILL_DB_PASSWORD:-}" ]; then
		_svc_login "$SECKILL_DB_USER" "$SECKILL_DB_PASSWORD" || { _svc_log "SECKILL_DB_USER '$SECKILL_DB_USER' with SECKILL_DB_PASSWORD does not reach MariaDB over TCP"; return 1; }
		_svc_log "database user '$SECKILL_DB_USER' (yours) reaches MariaDB over TCP"
		return 0
	fi
	local u=${SECKILL_SERVICES_DB_USER:-seckill_scripts} # another name: the scripts' own test only
	# The \_ keeps _ literal: seckill_* only, not seckillX.
	_svc_ensure_user "$u" "127.0.0.1 localhost" 'ALL PRIVILEGES ON `seckill\_%`.*' 'WITH GRANT OPTION' || return 1
	_svc_ensure_user "${u}_rt" "127.0.0.1" || return 1
	_svc_log "database user '$u' reaches MariaDB over TCP (rights on seckill_* databases only)"
	SECKILL_DB_USER=$u SECKILL_DB_PASSWORD=$(_svc_password_for "$u")
	export SECKILL_DB_USER SECKILL_DB_PASSWORD
	export SECKILL_TEST_MYSQL_RUNTIME_USER="${SECKILL_TEST_MYSQL_RUNTIME_USER:-${u}_rt:$(_svc_password_for "${u}_rt")}"
}

# services_ensure does all of the above and exports the test environment,
# keeping values the caller already set. Arguments: extra packages for
# services_install.
services_ensure() {
	services_install "$@"
	services_redis
	services_mariadb
	services_db_user
	local u=$SECKILL_DB_USER p=$SECKILL_DB_PASSWORD
	export SECKILL_TEST_REDIS_URL="${SECKILL_TEST_REDIS_URL:-redis://127.0.0.1:6379/0}"
	export SECKILL_TEST_MYSQL_DSN="${SECKILL_TEST_MYSQL_DSN:-$u:$p@tcp(127.0.0.1:3306)/?parseTime=true}"
	_svc_log "SECKILL_TEST_REDIS_URL=$SECKILL_TEST_REDIS_URL"
	_svc_log "SECKILL_TEST_MYSQL_DSN=${SECKILL_TEST_MYSQL_DSN%%:*}:***@${SECKILL_TEST_MYSQL_DSN#*@}"
}

# --- Redis Cluster and Sentinel for the scale-out tests -----------------------

# The Redis topologies are started by cmd/redistopo (internal/testkit/
# redistopo), the one starter the fault campaign uses too; these are its
# fixed ports.
SECKILL_CLUSTER_PORTS=(7000 7001 7002 7003 7004 7005)

_svc_port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

_svc_wait() { # _svc_wait SECONDS WHAT COMMAND...
	local secs=$1 what=$2 i
	shift 2
	for i in $(seq 1 $((secs * 10))); do
		"$@" && return 0
		sleep 0.1
	done
	_svc_log "$what: not ready within ${secs}s"
	return 1
}

# _svc_redistopo ARGS...: cmd/redistopo, from this checkout.
_svc_redistopo() { (cd "$(dirname "${BASH_SOURCE[0]}")/.." && go run ./cmd/redistopo "$@"); }

# services_cluster runs a 3-primary/3-replica Redis Cluster on 7000-7005 and
# exports its URL.
services_cluster() {
	local url
	url=$(_svc_redistopo start cluster) || return 1
	_svc_log "Redis Cluster is up on 127.0.0.1:7000-7005"
	export SECKILL_TEST_REDIS_CLUSTER_URL=$url
}

# services_sentinel runs a primary and its replica under three Sentinels
# (ports 7100-7104) and exports its URL.
services_sentinel() {
	local url
	url=$(_svc_redistopo start sentinel) || return 1
	_svc_log "Sentinel is up on 127.0.0.1:7102-7104"
	export SECKILL_TEST_REDIS_SENTINEL_URL=$url
}

# shellcheck source=scripts/galera.sh
source "$(dirname "${BASH_SOURCE[0]}")/galera.sh"

# services_topologies runs both and exports their URLs.
services_topologies() {
	services_cluster && services_sentinel
}

# services_stop_topologies stops every node of both and removes their data.
services_stop_topologies() {
	_svc_redistopo stop
	_svc_log "Redis Cluster and Sentinel stopped"
	services_stop_galera
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case "${1:-ensure}" in
	ensure)
		services_ensure
		printf 'export SECKILL_TEST_REDIS_URL=%q\n' "$SECKILL_TEST_REDIS_URL"
		printf 'export SECKILL_TEST_MYSQL_DSN=%q\n' "$SECKILL_TEST_MYSQL_DSN"
		[ -z "${SECKILL_TEST_MYSQL_RUNTIME_USER:-}" ] || printf 'export SECKILL_TEST_MYSQL_RUNTIME_USER=%q\n' "$SECKILL_TEST_MYSQL_RUNTIME_USER"
		;;
	topologies | cluster | sentinel)
		services_install >&2
		"services_$1"
		[ -z "${SECKILL_TEST_REDIS_CLUSTER_URL:-}" ] || printf 'export SECKILL_TEST_REDIS_CLUSTER_URL=%q\n' "$SECKILL_TEST_REDIS_CLUSTER_URL"
		[ -z "${SECKILL_TEST_REDIS_SENTINEL_URL:-}" ] || printf 'export SECKILL_TEST_REDIS_SENTINEL_URL=%q\n' "$SECKILL_TEST_REDIS_SENTINEL_URL"
		;;
	galera)
		services_galera
		printf 'export SECKILL_TEST_GALERA_DSN=%q\n' "$SECKILL_TEST_GALERA_DSN"
		printf 'export SECKILL_TEST_GALERA_NODES=%q\n' "$SECKILL_TEST_GALERA_NODES"
		printf 'export SECKILL_TEST_GALERA_DIR=%q\n' "$SECKILL_TEST_GALERA_DIR"
		;;
	stop-topologies)
		services_stop_topologies
		;;
	*)
		echo "usage: $0 [ensure|topologies|cluster|sentinel|galera|stop-topologies]" >&2
		exit 2
		;;
	esac
fi
