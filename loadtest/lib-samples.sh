# lib-samples.sh: run.sh's sampler (SAMPLE=1, the default of soak), sourced
# by it: each instance's resident memory, goroutines, open files and
# connections before the load, every SAMPLE_EVERY (10 s) during it, and
# once more after the service idled for IDLE_WAIT (15 s), in $samples_csv.

# sample_once appends one row per instance to the samples CSV: resident
# memory, goroutines (the service's own /metrics), open files, sockets, and
# established connections to Redis, to MariaDB and from HTTP clients.
sample_once() { # label
	local n pid base port rss gor fds socks rconns mconns hconns
	for n in $(seq 1 "${#svc_pids[@]}"); do
		pid=${svc_pids[$((n - 1))]} base=${base_urls[$((n - 1))]}
		port=${base##*:}
		kill -0 "$pid" 2>/dev/null || continue
		rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "")
		gor=$(curl -fsS --max-time 2 "$base/metrics" 2>/dev/null | "$logs/metrictable" value go_goroutines 2>/dev/null || true)
		fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l || true)
		socks=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 -lname 'socket:*' 2>/dev/null | wc -l || true)
		rconns=$(ss -Htnp state established "( dport = :$redis_port )" 2>/dev/null | grep -c "pid=$pid," || true)
		mconns=$(ss -Htnp state established '( dport = :3306 )' 2>/dev/null | grep -c "pid=$pid," || true)
		hconns=$(ss -Htn state established "( sport = :$port )" 2>/dev/null | wc -l || true)
		printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" "$(($(date +%s) - sample_start))" "$n" "$rss" "$gor" "$fds" "$socks" "$rconns" "$mconns" "$hconns" >>"$samples_csv"
	done
}

# start_sampling writes the CSV's header and the row "before", then starts
# the loop of rows "load" in the background: $sampler_pid, one of $pids.
start_sampling() {
	sample_start=$(date +%s)
	echo "label,elapsed_s,instance,rss_kb,goroutines,open_fds,sockets,redis_conns,mysql_conns,http_conns" >"$samples_csv"
	sample_once before
	(
		trap - EXIT # the runner's cleanup is not the sampler's
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		while :; do
			sleep "${SAMPLE_EVERY:-10}" & nap=$!
			wait "$nap"
			sample_once load
		done
	) &
	sampler_pid=$!
	pids+=("$sampler_pid")
	log "sampling the service every ${SAMPLE_EVERY:-10}s into $samples_csv"
}

# end_sampling stops the loop, idles, takes the row "idle", and logs per
# instance the goroutines before, at the peak and after the load; more than
# MAX_GOROUTINE_GROWTH (200) left behind set $soak_violation.
end_sampling() {
	sample_note=""
	kill -TERM "$sampler_pid" 2>/dev/null || true
	wait "$sampler_pid" 2>/dev/null || true
	log "load over; idling ${IDLE_WAIT:-15}s before the last sample"
	sleep "${IDLE_WAIT:-15}"
	sample_once idle
	# Per instance: goroutines before the load, at their peak, and after it.
	while IFS=, read -r n before peak idle peak_rss; do
		sample_note+=" instance$n: goroutines before=$before peak=$peak idle=$idle peak_rss=$((peak_rss / 1024))MB;"
		if [ -n "$before" ] && [ -n "$idle" ] && [ "$idle" -gt $((before + ${MAX_GOROUTINE_GROWTH:-200})) ]; then
			soak_violation="instance $n: $idle goroutines after the load, $before before it: more than ${MAX_GOROUTINE_GROWTH:-200} left behind"
		fi
	done < <("$logs/metrictable" samples "$samples_csv")
	log "samples:$sample_note see $samples_csv"
}
