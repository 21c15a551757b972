# shellcheck shell=bash
# reference.sh: bench.sh --reference (sourced by bench.sh, which defines
# die, log, free_port, floor_run, bench_run, $logs, $runs, $run_id).
#
# floorref (../shared/floorref beside the repository, or --reference-dir) is
# the minimal durable order: one Lua script and one MariaDB transaction a
# batch, nothing else. Its CPU per order is the yardstick of the service's.
# Neighbours on a shared machine move both, so the two are measured in one
# sitting, alternated (service, floorref, service, floorref ...: --pairs),
# and compared pair by pair; the median of the pairs is the figure to quote.
#
# The service's side is bench.sh's own run (bench_run, after a /healthz
# floor_run) at one concurrency; floorref's side is its own measure.sh,
# which fixes wrk -t2 -c64 -d10s: a wrk wrapper first on its PATH puts
# bench.sh's --conns and --duration in place of its -c and -d, so both sides
# run the same load. measure.sh's books check allows 64 orders beyond wrk's
# 2xx answers (its own -c64): above 64 connections it may say rows_ok=no.

# reference_args checks the options --reference needs and sets its defaults:
# measure.sh's -c64 -d10s unless --conns or --duration say otherwise.
reference_args() {
	[[ "$pairs" =~ ^[1-9][0-9]?$ ]] || die "--pairs takes 1 to 99, not $pairs"
	[ "$conns_given" = 1 ] || conns=64
	[ "$duration_given" = 1 ] || duration=10s
	if ! [[ "$conns" =~ ^[1-9][0-9]*$ ]] || [ "$conns" -lt 2 ]; then
		die "--reference measures one concurrency of at least 2 (wrk -t2): --conns N, not \"$conns\""
	fi
	case "$duration" in
	[1-9]*s) ref_secs=${duration%s} ;;
	[1-9]*m) ref_secs=$((${duration%m} * 60)) ;;
	*) ref_secs="" ;;
	esac
	[[ "$ref_secs" =~ ^[0-9]+$ ]] || die "--reference takes --duration in whole seconds or minutes (10s, 1m), not $duration"
	if [ "$instances" != 1 ] || [ "$activities" != 1 ] || [ "$join" != 0 ]; then
		die "--reference measures one instance's purchases on one activity: drop --instances, --activities and --join"
	fi
	if [ "$db_port" != 3306 ] || [ "$redis_node" != 127.0.0.1:6379 ]; then
		die "--reference compares with floorref on the MariaDB on :3306 and the Redis on :6379: drop --galera and SECKILL_REDIS_URL"
	fi
	# Relative to the repository's root, as every path bench.sh takes.
	case "$reference_dir" in /*) ;; *) reference_dir=$root/$reference_dir ;; esac
	reference_dir=$(realpath -m "$reference_dir")
	if [ ! -f "$reference_dir/measure.sh" ] || [ ! -f "$reference_dir/main.go" ]; then
		die "--reference: no floorref at $reference_dir (its main.go and measure.sh; --reference-dir DIR names another)"
	fi
}

# reference_build builds floorref into $logs and writes the wrk wrapper
# measure.sh runs (with this run's -c and -d).
reference_build() {
	log "building floorref ($reference_dir)"
	go build -C "$reference_dir" -o "$logs/floorref" . || die "--reference: floorref at $reference_dir does not build"
	mkdir -p "$logs/reference-bin"
	cat >"$logs/reference-bin/wrk" <<EOF
#!/usr/bin/env bash
# measure.sh's wrk, with bench.sh's -c$conns -d$duration for its own -c and -d.
args=() opts=1
for a in "\$@"; do
	[ "\$a" = -- ] && opts=0
	if [ "\$opts" = 1 ]; then
		case "\$a" in -c[0-9]*) a=-c$conns ;; -d[0-9]*) a=-d$duration ;; esac
	fi
	args+=("\$a")
done
exec $(command -v wrk) "\${args[@]}"
EOF
	chmod +x "$logs/reference-bin/wrk"
}

ref_pid="" ref_port="" ref_db="" ref_prefix=""
# reference_cleanup stops a measure.sh still running (its own trap stops
# floorref and drops its database and keys) and makes sure of all three.
reference_cleanup() {
	local pid
	if [ -n "$ref_pid" ]; then
		kill -TERM "$ref_pid" 2>/dev/null || true
		wait "$ref_pid" 2>/dev/null || true
	fi
	[ -n "$ref_port" ] || return 0
	pid=$(ss -Htlnp "sport = :$ref_port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n1)
	if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$logs/floorref" ]; then
		kill -TERM "$pid" 2>/dev/null || true
	fi
	mysql -uroot -h127.0.0.1 -P3306 -e "DROP DATABASE IF EXISTS \`$ref_db\`" 2>/dev/null || true
	redis-cli -h 127.0.0.1 -p 6379 --scan --pattern "${ref_prefix}*" 2>/dev/null |
		xargs -r -d '\n' -n 500 redis-cli -h 127.0.0.1 -p 6379 UNLINK >/dev/null || true
}

# reference_floorref PAIR: floorref's measure.sh, once, its FLOORREF line
# and orders= (its durable orders, from its books line on stderr) into fr.
# Not in a command substitution: reference_cleanup needs ref_pid.
reference_floorref() {
	local out=$logs/floorref-$1.out err=$logs/floorref-$1.err rc=0 line orders
	ref_port=$(free_port) ref_db="floorref_bench_$run_id" ref_prefix="floorref${run_id}:"
	PATH="$logs/reference-bin:$PATH" FLOORREF_PORT=$ref_port FLOORREF_DB=$ref_db FLOORREF_PREFIX=$ref_prefix \
		bash "$reference_dir/measure.sh" "$logs/floorref" >"$out" 2>"$err" &
	ref_pid=$!
	wait "$ref_pid" || rc=$?
	ref_pid=""
	line=$(grep '^FLOORREF ' "$out") || die "floorref's measure.sh printed no FLOORREF line (exit $rc): $(tail -n 2 "$err")"
	orders=$(sed -n 's/^books: .* orders=\([0-9]*\) .*/\1/p' "$err")
	fr="$line orders=${orders:-0}"
}

# reference_line PAIR RUN FLOORREF: the REFERENCE line of a pair, from the
# service's run line ($runs) and floorref's line. Per durable order (rows in
# SQL), /healthz per 2xx answer; orders/s over the nominal duration on both
# sides.
reference_line() {
	awk -v pair="$1" -v s="$2" -v f="$3" -v secs="$ref_secs" '
	function kv(line, a, n, i, t, m) {
		n = split(line, t, " ")
		for (i = 1; i <= n; i++) if ((m = index(t[i], "=")) > 0) a[substr(t[i], 1, m - 1)] = substr(t[i], m + 1)
	}
	function per(ticks, n) { return n > 0 ? ticks * 1e6 / S["clk_tck"] / n : -1 }
	function fmt(v) { return v < 0 ? "nan" : sprintf("%.1f", v) }
	function r(a, b) { return a < 0 || b <= 0 ? "nan" : sprintf("%.2f", a / b) }
	BEGIN {
		kv(s, S); kv(f, F)
		so = S["orders"] + 0; fo = F["orders"] + 0
		sv = per(S["cpu_svc"], so); sdr = per(S["cpu_db"] + S["cpu_redis"], so); sr = per(S["cpu_redis"], so)
		sh = per(S["hz_svc"], S["hz_ok"] + 0); sps = so / secs
		fv = F["order_us"] + 0; fdr = F["db_us"] + F["redis_us"]; fr = F["redis_us"] + 0; fh = F["healthz_us"] + 0; fps = fo / secs
		printf "REFERENCE pair=%s service_order_us=%s floorref_order_us=%s service_db_redis_us=%s floorref_db_redis_us=%s", pair, fmt(sv), fmt(fv), fmt(sdr), fmt(fdr)
		printf " service_redis_us=%s floorref_redis_us=%s service_orders_per_s=%d floorref_orders_per_s=%d", fmt(sr), fmt(fr), sps, fps
		printf " service_healthz_us=%s floorref_healthz_us=%s ratio_order=%s ratio_db_redis=%s ratio_redis=%s", fmt(sh), fmt(fh), r(sv, fv), r(sdr, fdr), r(sr, fr)
		printf " ratio_orders_per_s=%s ratio_healthz=%s floorref_rows_ok=%s\n", r(sps, fps), r(sh, fh), F["rows_ok"]
	}'
}

# reference_median FILE: the REFERENCE median line of the pairs' lines:
# each figure's median (the mean of the middle two for an even count).
reference_median() {
	local keys k v out ok=yes
	out="REFERENCE median pairs=$(grep -c . "$1")"
	keys=$(head -n1 "$1" | tr ' ' '\n' | sed -n 's/=.*//p' | grep -v -e '^pair$' -e '^floorref_rows_ok$')
	for k in $keys; do
		v=$(tr ' ' '\n' <"$1" | sed -n "s/^$k=//p" | grep -v nan | sort -g |
			awk -v k="$k" '{v[NR] = $1} END {if (NR == 0) {print "nan"; exit} m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf (k ~ /^ratio_/ ? "%.2f\n" : (k ~ /per_s$/ ? "%d\n" : "%.1f\n")), m}')
		out+=" $k=$v"
	done
	grep -q 'floorref_rows_ok=no' "$1" && ok=no
	echo "$out floorref_rows_ok=$ok"
}

# reference_table LINE: the median line as a Markdown table.
reference_table() {
	local -A m
	local kv
	for kv in $1; do [[ "$kv" == *=* ]] && m[${kv%%=*}]=${kv#*=}; done
	echo "Against floorref ($reference_dir), median of ${m[pairs]} alternated pair(s), wrk -t2 -c$conns -d$duration, CPU from /proc, per durable order:"
	echo
	echo "| per durable order | the service | floorref | ratio |"
	echo "| --- | ---: | ---: | ---: |"
	echo "| service CPU, µs | ${m[service_order_us]} | ${m[floorref_order_us]} | ${m[ratio_order]}x |"
	echo "| MariaDB + Redis CPU, µs | ${m[service_db_redis_us]} | ${m[floorref_db_redis_us]} | ${m[ratio_db_redis]}x |"
	echo "| Redis alone, µs | ${m[service_redis_us]} | ${m[floorref_redis_us]} | ${m[ratio_redis]}x |"
	echo "| orders/s | ${m[service_orders_per_s]} | ${m[floorref_orders_per_s]} | ${m[ratio_orders_per_s]}x |"
	echo "| \`/healthz\` service CPU, µs | ${m[service_healthz_us]} | ${m[floorref_healthz_us]} | ${m[ratio_healthz]}x |"
	echo
}

# reference_pairs: --pairs times the service (GET /healthz, then purchases
# on a fresh activity), then floorref; a REFERENCE line each, then the
# median line and its table.
reference_pairs() {
	local k run fr pline lines=$logs/reference.txt
	: >"$lines"
	for k in $(seq "$pairs"); do
		floor_aps="" floor_line=""
		floor_run "$conns"
		bench_run "$conns" 1 1
		run=$(tail -n 1 "$runs")
		log "pair $k: floorref's measure.sh (wrk -t2 -c$conns -d$duration; its log $logs/floorref-$k.err)"
		reference_floorref "$k"
		log "pair $k: $fr"
		pline=$(reference_line "$k" "$run" "$fr")
		echo "$pline" >>"$lines"
		echo "$pline"
	done
	pline=$(reference_median "$lines")
	echo "$pline"
	echo
	reference_table "$pline"
}
