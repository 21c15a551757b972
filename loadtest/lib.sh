# lib.sh: helpers shared by loadtest/run.sh, bench.sh and room.sh (sourced
# from the repository's root, $root; open_logs sets $logs, the run's log
# folder, which the others expect).

# open_logs NAME: $out_dir (loadtest/out) and a fresh $logs
# (loadtest/out/logs-NAME) for this run.
open_logs() {
	out_dir="$root/loadtest/out"
	logs="$out_dir/logs-$1"
	mkdir -p "$out_dir"
	rm -rf "$logs" && mkdir -p "$logs"
}

# log writes one line to stderr, stamped with the script's name and the time.
log() { printf '[%s %s] %s\n' "${0##*/}" "$(date -u +%H:%M:%S)" "$*" >&2; }

# kept_for_inspection is true, and says so, when this run's database, Redis
# keys and logs stay for inspection (--keep, or the run failed): the
# script's cleanup then removes nothing.
kept_for_inspection() {
	[ "$keep" = 1 ] || [ "$failed" = 1 ] || return 1
	[ -z "$db" ] || log "kept for inspection: database $db, Redis keys ${prefix}*, logs $logs"
}

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

# stop_pids stops every process in $pids: SIGTERM to all, then for each up
# to 5 s to exit before SIGKILL, and reaps it.
stop_pids() {
	local pid
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# new_namespace NAME DB_PORT: this run's own database ($db, $db_prefix and
# the run's id $run_id; created with the caller's sql, reached by $dsn on
# 127.0.0.1:DB_PORT), Redis key prefix ($prefix: NAME, the run's id, ":")
# and admin token ($admin_token: NAME-, random).
new_namespace() { # name db_port
	run_id="$(date -u +%Y%m%d%H%M%S)_$$"
	db="$db_prefix$run_id" prefix="$1${run_id}:"
	dsn="$db_user:$db_pass@tcp(127.0.0.1:$2)/$db?parseTime=true"
	sql -e "CREATE DATABASE \`$db\`"
	admin_token="$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
}

# start_userstub starts the user-verification stub ($logs/seckill
# userstub) on a free loopback port, adds it to $pids, waits until it
# answers, and points the service at it in $uc_env.
start_userstub() {
	local port
	port=$(free_port)
	"$logs/seckill" userstub -addr "127.0.0.1:$port" >"$logs/userstub.log" 2>&1 &
	pids+=($!)
	wait_http "http://127.0.0.1:$port/healthz" userstub 10 "${pids[-1]}"
	uc_env=(SECKILL_USERCHECK_URL="http://127.0.0.1:$port")
}

# read_books BIN NAME=VALUE... [FLAG...] runs the service's own check of
# the books (BIN books, cmd/seckill: orders holding a unit <= total, those
# orders + Redis remaining == total, no user twice, activities.sold == those
# orders) with the SECKILL_* settings and the books flags given, its JSON
# into $logs/books.json and its log into $logs/books.log; it returns the
# check's status: 0 the books balance, 1 a violation (listed in the JSON),
# 2 it could not look.
read_books() {
	local bin=$1 settings=()
	shift
	while [ $# -gt 0 ] && [[ "$1" == [A-Z]*=* ]]; do
		settings+=("$1")
		shift
	done
	env "${settings[@]}" SECKILL_LOG_LEVEL=warn "$bin" books "$@" >"$logs/books.json" 2>"$logs/books.log"
}

# books_unread is the violation of a check that could not look (status 2,
# or no JSON), naming its status and its log's last line; "" when it looked.
books_unread() { # status
	if [ "$1" -le 1 ] && jq -e '.activities' "$logs/books.json" >/dev/null 2>&1; then
		return 0
	fi
	echo "seckill books could not read the books (exit $1): $(tail -n 1 "$logs/books.log")"
}

# progress_loop ADDR prints the live progress of the k6 run whose REST API
# listens on ADDR (k6 run --address) until killed: elapsed seconds, requests
# and the answers seckill.js counts by kind (201 orders_created, 409
# sold_out + already_purchased, 429 busy, 503 unavailable). On a terminal
# the line is redrawn in place every second; otherwise one line is printed
# every PROGRESS_EVERY seconds (10).
progress_loop() {
	local addr=$1 start=$SECONDS every=${PROGRESS_EVERY:-10} tty=0 line last=0
	[ -t 2 ] && tty=1 every=1
	while sleep 1; do
		line=$(curl -fsS --max-time 1 "http://$addr/v1/metrics" 2>/dev/null | jq -r '
			[.data[] | {key: .id, value: (.attributes.sample.count // 0)}] | from_entries as $m
			| "reqs=\($m.http_reqs // 0) 201=\($m.orders_created // 0) 409=\(($m.sold_out // 0) + ($m.already_purchased // 0)) 429=\($m.busy // 0) 503=\($m.unavailable // 0)"' 2>/dev/null) || continue
		[ -n "$line" ] || continue
		if [ "$tty" = 1 ]; then
			printf '\r[k6 %4ds] %s   ' "$((SECONDS - start))" "$line" >&2
		elif [ $((SECONDS - last)) -ge "$every" ]; then
			last=$SECONDS
			printf '[k6 %4ds] %s\n' "$((SECONDS - start))" "$line" >&2
		fi
	done
}

# cpu_ticks PID...: the CPU the processes have spent so far, user plus
# system (utime + stime of /proc/PID/stat, every thread's), in clock ticks
# (getconf CLK_TCK), summed; a process that is gone counts 0.
cpu_ticks() {
	local pid stat sum=0 f
	for pid in "$@"; do
		read -r stat 2>/dev/null <"/proc/$pid/stat" || continue
		# The command name, in parentheses, may hold spaces: the fields
		# after it start at the third, the state.
		read -ra f <<<"${stat##*) }"
		sum=$((sum + f[11] + f[12]))
	done
	echo "$sum"
}

# children_ticks VAR sets VAR to the CPU of this shell's children it has
# waited for (cutime + cstime of /proc/$BASHPID/stat, in clock ticks): the
# load generator's CPU is read this way, since it is gone once waited for.
# A variable, not an echo: a command substitution is a shell of its own.
children_ticks() {
	local stat f
	read -r stat <"/proc/$BASHPID/stat"
	read -ra f <<<"${stat##*) }"
	printf -v "$1" '%d' $((f[13] + f[14]))
}

# answered_orders K6_CSV[.gz]: one line "ORDER_ID UNITS" per 201 of the run,
# from k6's samples of units_created, to which seckill.js attaches the
# order's id as metadata (searched in the metadata and extra_tags columns,
# by the header's names); an empty id when a sample has none.
answered_orders() {
	case "$1" in *.gz) gzip -dc "$1" ;; *) cat "$1" ;; esac | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["metric_name"] != "units_created" { next }
		{
			id = ""
			for (c in col) {
				if (c != "metadata" && c != "extra_tags") continue
				n = split($col[c], kv, "&")
				for (j = 1; j <= n; j++) if (kv[j] ~ /^order_id=/) id = substr(kv[j], 10)
			}
			printf "%s %d\n", id, $col["metric_value"]
		}'
}

# units_books: one line "ACTIVITY_ID TOTAL_STOCK UNITS ORDERS" per activity
# of the run's database (sql, the caller's), UNITS the sum of the quantity
# of its created and paid orders (the units sold and not given back), ORDERS
# their count; read with SQL rather than through the service.
units_books() {
	sql -e "SELECT a.id, a.total_stock,
		COALESCE(SUM(CASE WHEN o.status IN ('created', 'paid') THEN o.quantity ELSE 0 END), 0),
		COUNT(CASE WHEN o.status IN ('created', 'paid') THEN 1 END)
		FROM activities a LEFT JOIN orders o ON o.activity_id = a.id GROUP BY a.id, a.total_stock ORDER BY a.id" "$db"
}

# missing_answers ANSWERED: the lines of ANSWERED (answered_orders) whose
# order is not in the run's database with that quantity, each as "ID
# UNITS: what is wrong"; ids that are not UUIDs are never sent to SQL.
missing_answers() {
	local rows have
	rows=$(awk '$1 ~ /^[0-9a-fA-F-]+$/ && length($1) == 36 { printf "%s\047%s\047", (n++ ? "," : ""), $1 }' "$1")
	[ -n "$rows" ] || rows="''"
	# Through stdin: a run's thousands of ids are longer than one argument may be.
	have=$(sql "$db" <<<"SELECT id, quantity FROM orders WHERE id IN ($rows)") || return 1
	awk '
		FILENAME == ARGV[1] { have[$1] = $2; next }
		$1 == "" { print "(no order id): " $2 " units answered 201 without an id"; next }
		!($1 in have) { print $1 " " $2 ": answered 201, no row"; next }
		have[$1] != $2 { print $1 " " $2 ": answered 201 for " $2 " units, the row holds " have[$1] }
	' <(printf '%s\n' "$have") "$1"
}
