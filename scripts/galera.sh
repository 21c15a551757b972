#!/usr/bin/env bash
# galera.sh runs a 3-node MariaDB Galera cluster on loopback behind HAProxy,
# single writer (node 1 active, nodes 2 and 3 backup), for the order store's
# failover tests. services.sh sources it (`bash scripts/services.sh galera`,
# and `stop-topologies` stops it). No Docker: Debian's mariadb-server with
# galera-4, haproxy and rsync (the SST), from the same packages.
#
#   SQL:     127.0.0.1:3311-3313 (node 1-3), HAProxy 127.0.0.1:3310
#   Galera:  gmcast 4571-4573, IST 4581-4583, SST 4591-4593
#
# SECKILL_GALERA_CHECK_INTER (ms, default 1000) is HAProxy's check interval,
# which is also the external check's deadline: on a machine loaded past its
# cores the check took 400-600 ms and HAProxy marked every Synced node down.
# SECKILL_GALERA_PORT (HAProxy; the nodes take the three ports after it) and
# SECKILL_GALERA_GCOMM_PORT (gmcast after it, IST 10 and SST 20 further on),
# with SECKILL_GALERA_DIR, run a second cluster beside the tests' own:
# loadtest/chaos.sh does, so its kills disturb no other test.
#
# Idempotent: running nodes are left alone; a node that is down (a test
# killed it) is started again and rejoins by IST; with no node alive the
# cluster is recovered from the node whose data is furthest ahead (as after
# a power cut: --wsrep-recover, safe_to_bootstrap, --wsrep-new-cluster), and
# made anew only when there is no data (or SECKILL_GALERA_FRESH=1). HAProxy's health check asks each node for
# wsrep_local_state_comment = Synced (galera-check.sh), so a joining or
# donor node takes no writes.

SECKILL_GALERA_NODES=(1 2 3)
SECKILL_GALERA_HAPROXY_PORT=${SECKILL_GALERA_PORT:-3310}
SECKILL_GALERA_GCOMM_BASE=${SECKILL_GALERA_GCOMM_PORT:-4570}

_galera_dir() { printf '%s' "${SECKILL_GALERA_DIR:-/tmp/seckill-galera}"; }
_galera_port() { printf '%s' "$((SECKILL_GALERA_HAPROXY_PORT + $1))"; }
_galera_gcomm() { printf '%s' "$((SECKILL_GALERA_GCOMM_BASE + $1))"; } # _galera_gcomm OFFSET
_galera_sock() { printf '%s/node%s/mysqld.sock' "$(_galera_dir)" "$1"; }
_galera_sql() { # _galera_sql NODE SQL: as root over the node's socket
	timeout 5 mariadb --no-defaults -uroot -S "$(_galera_sock "$1")" -N -B -e "$2" 2>/dev/null
}
_galera_state() { _galera_sql "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" | awk '{print $2}'; }
_galera_size() { _galera_sql "$1" "SHOW STATUS LIKE 'wsrep_cluster_size'" | awk '{print $2}'; }
_galera_alive() { [ -S "$(_galera_sock "$1")" ] && _galera_sql "$1" "SELECT 1" >/dev/null; }

# _galera_synced: every node Synced in a cluster of three.
_galera_synced() {
	local n
	for n in "${SECKILL_GALERA_NODES[@]}"; do
		[ "$(_galera_state "$n")" = Synced ] && [ "$(_galera_size "$n")" = 3 ] || return 1
	done
}

_galera_conf() { # _galera_conf NODE: writes the node's option file
	local n=$1 dir
	dir="$(_galera_dir)/node$n"
	cat >"$dir/my.cnf" <<-CNF
		[mysqld]
		user=mysql
		datadir=$dir/data
		socket=$dir/mysqld.sock
		pid-file=$dir/mysqld.pid
		log-error=$dir/error.log
		port=$(_galera_port "$n")
		bind-address=127.0.0.1
		skip-name-resolve
		innodb_buffer_pool_size=64M
		binlog_format=ROW
		default_storage_engine=InnoDB
		innodb_autoinc_lock_mode=2
		wsrep_on=ON
		wsrep_provider=/usr/lib/galera/libgalera_smm.so
		wsrep_cluster_name=seckill
		wsrep_cluster_address=gcomm://127.0.0.1:$(_galera_gcomm 1),127.0.0.1:$(_galera_gcomm 2),127.0.0.1:$(_galera_gcomm 3)
		wsrep_node_name=node$n
		wsrep_node_address=127.0.0.1
		wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(_galera_gcomm "$n");ist.recv_addr=127.0.0.1:$(_galera_gcomm $((n + 10)));gcache.size=64M"
		wsrep_sst_receive_address=127.0.0.1:$(_galera_gcomm $((n + 20)))
		wsrep_sst_method=rsync
	CNF
}

# _galera_start NODE [--wsrep-new-cluster]
_galera_start() {
	local n=$1 dir
	shift
	dir="$(_galera_dir)/node$n"
	_galera_alive "$n" && return 0
	if _svc_port_taken "$(_galera_port "$n")"; then
		_svc_log "port $(_galera_port "$n") is taken by something that is not Galera node $n: pick other ports"
		return 1
	fi
	mkdir -p "$dir/data"
	if [ ! -d "$dir/data/mysql" ]; then
		mariadb-install-db --no-defaults --datadir="$dir/data" --user=mysql --auth-root-authentication-method=socket >"$dir/install.log" 2>&1 || {
			_svc_log "mariadb-install-db for Galera node $n failed: $dir/install.log"
			return 1
		}
	fi
	chown -R mysql:mysql "$dir"
	_galera_conf "$n"
	rm -f "$dir/mysqld.sock"
	(setsid mariadbd --defaults-file="$dir/my.cnf" "$@" >>"$dir/stdout.log" 2>&1 &)
}

_galera_haproxy_up() { _svc_port_taken "$SECKILL_GALERA_HAPROXY_PORT"; }
_galera_proxy_on_node1() {
	[ "$(timeout 5 mariadb --no-defaults -h 127.0.0.1 -P "$SECKILL_GALERA_HAPROXY_PORT" -useckill -pseckill -N -B \
		-e 'SELECT @@port' 2>/dev/null)" = "$(_galera_port 1)" ]
}

_galera_haproxy() {
	local dir
	dir=$(_galera_dir)
	_galera_haproxy_up && return 0
	cat >"$dir/check.sh" <<-'SH'
		#!/bin/sh
		# HAProxy external check: args are proxy address and port, then the
		# server's address and port. Healthy = wsrep_local_state_comment Synced.
		state=$(timeout 2 mariadb --no-defaults -h "$3" -P "$4" -uhaproxy -N -B \
			-e "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | awk '{print $2}')
		[ "$state" = Synced ]
	SH
	chmod 755 "$dir/check.sh"
	cat >"$dir/haproxy.cfg" <<-CFG
		global
		    maxconn 4096
		    external-check
		    insecure-fork-wanted
		defaults
		    mode tcp
		    timeout connect 2s
		    timeout client 1h
		    timeout server 1h
		listen galera
		    bind 127.0.0.1:$SECKILL_GALERA_HAPROXY_PORT
		    option external-check
		    external-check path "/usr/bin:/bin:/usr/sbin"
		    external-check command $dir/check.sh
		    default-server inter ${SECKILL_GALERA_CHECK_INTER:-1000} fall 2 rise 3 on-marked-down shutdown-sessions on-marked-up shutdown-backup-sessions
		    server node1 127.0.0.1:$(_galera_port 1) check
		    server node2 127.0.0.1:$(_galera_port 2) check backup
		    server node3 127.0.0.1:$(_galera_port 3) check backup
	CFG
	(setsid haproxy -f "$dir/haproxy.cfg" -db >>"$dir/haproxy.log" 2>&1 &)
	_svc_wait 10 "HAProxy on 127.0.0.1:$SECKILL_GALERA_HAPROXY_PORT" _galera_haproxy_up
}

_galera_any_alive() {
	local n
	for n in "${SECKILL_GALERA_NODES[@]}"; do _galera_alive "$n" && return 0; done
	return 1
}

# _galera_recover bootstraps a cluster none of whose nodes runs from the node
# with the highest recovered seqno, keeping the data; the others then join it.
_galera_recover() {
	local dir n best="" best_seq=-2 pos seq
	dir=$(_galera_dir)
	for n in "${SECKILL_GALERA_NODES[@]}"; do
		[ -f "$dir/node$n/my.cnf" ] && [ -d "$dir/node$n/data/mysql" ] || continue
		pkill -9 -f "$dir/node$n/my.cnf" 2>/dev/null || true
		rm -f "$dir/node$n/recover.log"
		timeout 60 mariadbd --defaults-file="$dir/node$n/my.cnf" --wsrep-recover --log-error="$dir/node$n/recover.log" >/dev/null 2>&1 || true
		pos=$(grep -o 'Recovered position: [^ ]*' "$dir/node$n/recover.log" 2>/dev/null | tail -n 1 | awk '{print $3}')
		seq=${pos##*:}
		case "$seq" in '' | *[!0-9-]*) continue ;; esac
		if [ "$seq" -gt "$best_seq" ]; then best=$n best_seq=$seq; fi
	done
	[ -n "$best" ] || return 1
	_svc_log "recovering the Galera cluster from node $best (seqno $best_seq)"
	sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$dir/node$best/data/grastate.dat"
	_galera_start "$best" --wsrep-new-cluster
}

# services_galera runs the cluster and HAProxy and exports
# SECKILL_TEST_GALERA_DSN (through HAProxy) and SECKILL_TEST_GALERA_NODES
# (the nodes' SQL addresses, node 1 first).
services_galera() {
	# A joiner's IST and a recovery take seconds on a quiet box and minutes on
	# one whose cores run a test suite besides: the bounds are for a wedged
	# node, not a slow one.
	local n alive=0 dir wait=${SECKILL_GALERA_WAIT:-240}
	dir=$(_galera_dir)
	command -v haproxy >/dev/null 2>&1 && [ -f /usr/lib/galera/libgalera_smm.so ] && command -v rsync >/dev/null 2>&1 ||
		services_apt_install galera-4 haproxy rsync || return 1
	for n in "${SECKILL_GALERA_NODES[@]}"; do _galera_alive "$n" && alive=$((alive + 1)); done
	if [ "$alive" = 0 ] && [ "${SECKILL_GALERA_FRESH:-0}" != 1 ] && _galera_recover; then
		_svc_wait "$wait" "Galera recovery" _galera_any_alive || return 1
	elif [ "$alive" = 0 ]; then
		pkill -f "haproxy -f $dir/haproxy.cfg" 2>/dev/null || true
		rm -rf "$dir" # nothing of a previous run is alive: start afresh
		mkdir -p "$dir"
		chmod 755 "$dir"
		_svc_log "bootstrapping a 3-node Galera cluster on 127.0.0.1:$(_galera_port 1)-$(_galera_port 3)"
		_galera_start 1 --wsrep-new-cluster || return 1
		_svc_wait "$wait" "Galera node 1" _galera_alive 1 || return 1
		_galera_sql 1 "CREATE USER IF NOT EXISTS 'seckill'@'127.0.0.1' IDENTIFIED BY 'seckill';
			GRANT ALL ON *.* TO 'seckill'@'127.0.0.1' WITH GRANT OPTION;
			CREATE USER IF NOT EXISTS 'haproxy'@'127.0.0.1'; FLUSH PRIVILEGES;" || return 1
	fi
	for n in "${SECKILL_GALERA_NODES[@]}"; do
		_galera_start "$n" || return 1
		# One joiner at a time: two SSTs from one donor would queue anyway.
		_svc_wait "$wait" "Galera node $n" _galera_alive "$n" || { _svc_log "see $dir/node$n/error.log"; return 1; }
	done
	_svc_wait "$wait" "Galera cluster (3 nodes Synced)" _galera_synced || return 1
	_galera_haproxy || return 1
	# A node 1 that rejoined is Synced seconds before HAProxy's checks mark it
	# up (rise 3); then HAProxy cuts every session on the backup it wrote to.
	# Whoever connects meanwhile (a service migrating at start-up) is cut.
	_svc_wait 90 "HAProxy writing to node 1" _galera_proxy_on_node1 || return 1
	_svc_log "Galera is up on 127.0.0.1:$(_galera_port 1)-$(_galera_port 3) behind HAProxy on 127.0.0.1:$SECKILL_GALERA_HAPROXY_PORT"
	export SECKILL_TEST_GALERA_DSN="seckill:seckill@tcp(127.0.0.1:$SECKILL_GALERA_HAPROXY_PORT)/?parseTime=true"
	export SECKILL_TEST_GALERA_NODES="127.0.0.1:$(_galera_port 1),127.0.0.1:$(_galera_port 2),127.0.0.1:$(_galera_port 3)"
	export SECKILL_TEST_GALERA_DIR="$dir"
}

# services_stop_galera stops HAProxy and the nodes and removes their data.
services_stop_galera() {
	local dir n
	dir=$(_galera_dir)
	pkill -f "haproxy -f $dir/haproxy.cfg" 2>/dev/null || true
	for n in "${SECKILL_GALERA_NODES[@]}"; do
		[ -f "$dir/node$n/mysqld.pid" ] && kill "$(cat "$dir/node$n/mysqld.pid")" 2>/dev/null || true
	done
	for n in "${SECKILL_GALERA_NODES[@]}"; do
		_svc_wait 30 "Galera node $n to stop" eval "! _galera_alive $n" || pkill -9 -f "$dir/node$n/my.cnf" || true
	done
	rm -rf "$dir"
	_svc_log "Galera and HAProxy stopped"
}
