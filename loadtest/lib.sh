# lib.sh: helpers shared by loadtest/run.sh and loadtest/bench.sh (sourced;
# they expect $logs, the run's log folder, and a log function).

free_port() {
	local p
	while :; do
		# Below Linux's ephemeral range (32768+), where client sockets of
		# this very run would otherwise compete for the port.
		p=$((20000 + RANDOM % 12000))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}

wait_http() { # url what seconds [pid]
	local i
	for i in $(seq 1 $(($3 * 10))); do
		curl -fsS -o /dev/null --max-time 1 "$1" 2>/dev/null && return 0
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			log "$2 exited before it answered at $1; its log:"
			tail -n 30 "$logs/$2.log" >&2 || true
			return 1
		fi
		sleep 0.1
	done
	log "$2 did not answer at $1 within $3s; its log:"
	tail -n 30 "$logs/$2.log" >&2 || true
	return 1
}
