#!/usr/bin/env bash
# services.sh makes sure the real Redis and MariaDB the tests and load tests run
# against are installed, running on loopback, and reachable over TCP by a
# dedicated database user. Idempotent: every step checks before it acts, and
# it never flushes, stops or restarts a server that is already running.
#
#   bash scripts/services.sh ensure   # prints `export ...` lines for the test env
#   source scripts/services.sh        # defines the functions; then: services_ensure
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
	redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >&2
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
# other set-ups let root in over TCP with an empty password: try both.
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
GRANT ALL ON *.* TO '$u'@'localhost';
GRANT ALL ON *.* TO '$u'@'127.0.0.1';
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

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case "${1:-ensure}" in
	ensure)
		services_ensure
		printf 'export SECKILL_TEST_REDIS_URL=%q\n' "$SECKILL_TEST_REDIS_URL"
		printf 'export SECKILL_TEST_MYSQL_DSN=%q\n' "$SECKILL_TEST_MYSQL_DSN"
		;;
	*)
		echo "usage: $0 [ensure]" >&2
		exit 2
		;;
	esac
fi
