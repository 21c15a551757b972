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
# Tunables: SECKILL_DB_USER / SECKILL_DB_PASSWORD (default seckill/seckill),
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

# services_apt_install installs Debian packages, non-interactively.
services_apt_install() {
	_svc_log "installing $* (apt-get)"
	_svc_sudo apt-get update -qq >&2
	_svc_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
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

# services_db_user creates the TCP user the tests connect as. A fresh Debian
# MariaDB lets root in only through the unix socket (TCP answers error 1698);
# other set-ups let root in over TCP with an empty password: try both. WITH
# GRANT OPTION: a test creates a least-privilege user and grants it rights.
services_db_user() {
	local u=${SECKILL_DB_USER:-seckill} p=${SECKILL_DB_PASSWORD:-seckill}
	if mariadb -u"$u" -p"$p" -h 127.0.0.1 -P 3306 -e 'SELECT 1' >/dev/null 2>&1; then
		_svc_log "database user '$u' reaches MariaDB over TCP"
		return 0
	fi
	local sql="CREATE USER IF NOT EXISTS '$u'@'localhost' IDENTIFIED BY '$p';
CREATE USER IF NOT EXISTS '$u'@'127.0.0.1' IDENTIFIED BY '$p';
ALTER USER '$u'@'localhost' IDENTIFIED BY '$p';
ALTER USER '$u'@'127.0.0.1' IDENTIFIED BY '$p';
GRANT ALL ON *.* TO '$u'@'localhost' WITH GRANT OPTION;
GRANT ALL ON *.* TO '$u'@'127.0.0.1' WITH GRANT OPTION;
FLUSH PRIVILEGES;"
	_svc_log "creating database user '$u' for TCP access"
	if _svc_sudo mariadb -uroot -e "$sql" 2>/dev/null; then
		_svc_log "created through the unix socket as root"
	elif mariadb -uroot -h 127.0.0.1 -P 3306 -e "$sql"; then
		_svc_log "created over TCP as root (empty password)"
	else
		_svc_log "cannot create '$u': neither root over the unix socket nor root over TCP got in"
		return 1
	fi
	mariadb -u"$u" -p"$p" -h 127.0.0.1 -P 3306 -e 'SELECT 1' >/dev/null
}

# services_ensure does all of the above and exports the test environment,
# keeping values the caller already set. Arguments: extra packages for
# services_install.
services_ensure() {
	services_install "$@"
	services_redis
	services_mariadb
	services_db_user
	local u=${SECKILL_DB_USER:-seckill} p=${SECKILL_DB_PASSWORD:-seckill}
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
