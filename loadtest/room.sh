#!/usr/bin/env bash
# room.sh runs the waiting room's crowd scenario end to end on loopback,
# against the real Redis and MariaDB (docs/API.md "Waiting room"):
#
#   1. builds the service and loadtest/crowd, makes sure Redis and MariaDB
#      run (scripts/services.sh), installs wrk and gnuplot-nox when missing;
#   2. creates a database and a Redis key prefix of this run's own, and
#      starts --instances service instances (user verification approve-all,
#      or the stub with --verify stub; payments off);
#   3. creates an activity of --stock units whose waiting room opens now and
#      whose sale starts --lead seconds later;
#   4. runs the crowd (loadtest/crowd -room): --users buyers join before the
#      start, spread over the pre-queue period and round-robin over the
#      instances, poll as told, buy once admitted, poll on until final;
#   5. checks the books with `seckill books` (orders <= total, no user
#      twice, orders + Redis remaining == total, activities.sold == rows),
#      and the crowd's 201s == rows, then measures GET /healthz answers/s
#      of each instance in the same sitting (wrk -t1 -c64, or the crowd's
#      -healthz without wrk);
#   6. draws the queue draining (loadtest/out/room-chart.png, gnuplot) from
#      the crowd's time series (loadtest/out/room-series.csv; PASS or FAIL in
#      its title), prints a short table of the crowd's summary (the whole of
#      it in loadtest/out/room-summary.json) and one result line, and stops everything it started; the database and the
#      Redis keys are dropped unless the run failed or --keep was given.
#
# usage: loadtest/room.sh [--users N] [--stock N] [--instances N] [--lead S]
#                         [--conns N] [--verify approve|stub] [--keep]
#                         [--db-prefix P] [--no-show F] [--no-wait] [--h2c]
# The crowd long-polls (queue/mine?wait=30) while prequeue or waiting; --no-wait
# polls as refresh_s says instead, for comparison. The summary's "long_poll"
# gives per user the admission-to-seen, last-sale-to-closed-seen and
# start-to-final times. Each user's long poll holds a connection of the
# crowd and of an instance: --h2c sends them as HTTP/2 streams without TLS,
# each user's on one of a fixed set of connections, 200 users to one (the
# service takes up to 250), as a gateway's upstream does, for a crowd
# larger than the open-file limit (ulimit -Hn); --conns then does not apply.
# --no-show F: a share F (0 to below 1) of the admitted users never buy and
# stop polling; the instances then run with SECKILL_ADMISSION_IDLE (default
# here 1500ms: an admitted buyer is told to poll every second, so half a
# second late) so their admissions lapse early and their units go on.
# --db-prefix P names the run's database P<run id> (default seckill_room_): the
# scripts' own MariaDB user (scripts/services.sh) may create seckill_*
# databases only; another prefix needs SECKILL_DB_USER and
# SECKILL_DB_PASSWORD of a user of yours that may.
# Defaults: 20000 users, 1000 units, 2 instances, the sale 20 s after the
# room opens, 256 connections per instance. Exits 0 when the crowd's
# thresholds (no oversell, every unit sold, no admitted buyer told
# sold_out, every user final, the winners' join ranks uniform) and the books
# pass, 1 otherwise, 2 on bad usage. Service settings may be passed in the
# environment (e.g. SECKILL_ADMISSION_TTL=30s).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

db_prefix=seckill_room_ users=20000 stock=1000 instances=2 lead=20 conns=256 verify=approve keep=0 no_show=0 wait_flag= h2c_flag=
die() { echo "room.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--users) users=${2:?}; shift 2 ;;
	--stock) stock=${2:?}; shift 2 ;;
	--instances) instances=${2:?}; shift 2 ;;
	--lead) lead=${2:?}; shift 2 ;;
	--conns) conns=${2:?}; shift 2 ;;
	--verify) verify=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--no-wait) wait_flag=-no-wait; shift ;;
	--h2c) h2c_flag=-h2c; shift ;;
	--no-show) no_show=${2:?}; [[ "$no_show" =~ ^0(\.[0-9]+)?$ ]] || die "--no-show takes a share from 0 to below 1, such as 0.5, not $no_show"; shift 2 ;;
	--db-prefix) db_prefix=${2:?}; [[ "$db_prefix" =~ ^[A-Za-z0-9_]{1,40}$ ]] || die "--db-prefix takes letters, digits and _ (at most 40), not $db_prefix"; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
for v in users stock lead conns; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--$v takes a positive number, not ${!v}"
done
[[ "$instances" =~ ^[1-9]$ ]] || die "--instances must be 1..9"
case "$verify" in approve | stub) ;; *) die "--verify must be approve or stub" ;; esac
[ "$lead" -ge 5 ] || die "--lead must leave at least 5 s before the start"

# shellcheck source=lib.sh
source loadtest/lib.sh
open_logs room

pids=() db="" prefix="" failed=1
redis() { redis-cli -h 127.0.0.1 -p 6379 "$@"; }
sql() { mariadb -h 127.0.0.1 -P 3306 -u"$db_user" -p"$db_pass" -N -B "$@"; }
cleanup() {
	stop_pids
	kept_for_inspection && return
	[ -z "$db" ] || sql -e "DROP DATABASE IF EXISTS \`$db\`" 2>/dev/null || true
	if [ -n "$prefix" ]; then
		redis --scan --pattern "${prefix}*" 2>/dev/null | xargs -r -d '\n' -n 500 redis-cli -h 127.0.0.1 -p 6379 UNLINK >/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM


# ---- 1. build, services, tools ----------------------------------------------
command -v go >/dev/null || die "go is needed to build the service"
# shellcheck source=../scripts/services.sh
source scripts/services.sh
services_ensure wrk jq curl >&2
if ! command -v gnuplot >/dev/null 2>&1; then
	services_apt_install gnuplot-nox >&2 || log "gnuplot-nox could not be installed: no PNG chart"
fi
db_user=$SECKILL_DB_USER db_pass=$SECKILL_DB_PASSWORD # services_ensure set them
sql -e 'SELECT 1' >/dev/null || die "cannot reach MariaDB at 127.0.0.1:3306 as $db_user"
redis PING | grep -q PONG || die "cannot reach Redis at 127.0.0.1:6379"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
log "building the service, the crowd and metrictable"
go build -o "$logs/seckill" ./cmd/seckill
go build -o "$logs/crowd" ./loadtest/crowd
go build -o "$logs/metrictable" ./loadtest/metrictable

# ---- 2. database, prefix, instances -----------------------------------------
new_namespace room 3306
# approve: no user check, on purpose (the secure defaults want it said).
uc_env=(SECKILL_USERCHECK=approve-all)
[ "$verify" = stub ] && start_userstub
idle_env=()
[ "$no_show" = 0 ] || idle_env=(SECKILL_ADMISSION_IDLE="${SECKILL_ADMISSION_IDLE:-1500ms}")
bases=() svc_pids=()
for k in $(seq "$instances"); do
	port=$(free_port)
	env SECKILL_HTTP_ADDR="127.0.0.1:$port" SECKILL_REDIS_URL=redis://127.0.0.1:6379/0 \
		SECKILL_MYSQL_DSN="$dsn" SECKILL_ADMIN_TOKEN="$admin_token" SECKILL_KEY_PREFIX="$prefix" SECKILL_LOG_LEVEL="${SECKILL_LOG_LEVEL:-warn}" \
		"${uc_env[@]}" "${idle_env[@]}" "$logs/seckill" serve >"$logs/seckill-$k.log" 2>&1 &
	svc_pids+=($!) pids+=($!)
	bases+=("http://127.0.0.1:$port")
	# The first instance applies the migrations; the others start after it.
	wait_http "${bases[-1]}/readyz" "seckill-$k" 30 "${svc_pids[-1]}"
done
urls=$(IFS=,; echo "${bases[*]}")
log "instances ${bases[*]}, verification: $verify, database $db, prefix $prefix"

# ---- 3. the activity --------------------------------------------------------
opens=$(date -u -d '-1 second' +%Y-%m-%dT%H:%M:%SZ)
starts=$(date -u -d "+$lead seconds" +%Y-%m-%dT%H:%M:%SZ)
ends=$(date -u -d "+$((lead + 1800)) seconds" +%Y-%m-%dT%H:%M:%SZ)
act=$(curl -fsS -X POST "${bases[0]}/admin/v1/activities" -H "Authorization: Bearer $admin_token" \
	-d "{\"name\":\"room crowd\",\"total_stock\":$stock,\"starts_at\":\"$starts\",\"ends_at\":\"$ends\",\"waiting_room\":{\"opens_at\":\"$opens\"}}")
id=$(jq -r .id <<<"$act")
[[ "$id" =~ ^[0-9]+$ ]] || die "activity not created: $act"
log "activity $id: $stock units, waiting room open since $opens, starts $starts"

# ---- 4. the crowd -----------------------------------------------------------
series="$out_dir/room-series.csv" detail="$logs/users.jsonl" chart="$out_dir/room-chart.png"
rm -f "$series" "$chart"
crowd_rc=0
# The crowd is 100,000 goroutines on the service's 2 cores. In a profile of
# a 100,000-user run, its garbage collection and the regrowth of the stacks
# a collection had shrunk (each parked user's next request grows it again)
# were a third of its CPU: it collects less often, and shrinks no stack.
GOGC=${CROWD_GOGC:-400} GODEBUG=gcshrinkstackoff=1 "$logs/crowd" -room -url "$urls" -activity "$id" -users "$users" -conns "$conns" \
	-admission-ttl "${SECKILL_ADMISSION_TTL:-60s}" -no-show "$no_show" -csv "$series" -detail "$detail" ${wait_flag:+"$wait_flag"} ${h2c_flag:+"$h2c_flag"} \
	>"$logs/crowd.json" 2> >(tee "$logs/crowd.log" >&2) || crowd_rc=$?
summary=$(tail -n 1 "$logs/crowd.json")
[ -n "$summary" ] || summary='{}'
# The crowd's whole summary goes to a file; a few lines of it to the terminal.
echo "$summary" | jq . >"$out_dir/room-summary.json" 2>/dev/null || echo "$summary" >"$out_dir/room-summary.json"
jq -r '["users", .users], ["units sold", .units_sold], ["users admitted", .users_admitted],
	["admitted, told sold_out", .admitted_told_sold_out], ["users not final", .non_final], ["sold out after (s)", .sell_out_s],
	["fairness chi2 (p)", "\(.fairness.chi2) (\(.fairness.p_value))"], ["ETA within 50%", .eta.share] | map(tostring) | @tsv' <<<"$summary" 2>/dev/null |
	awk -F'\t' '{ printf "  %-26s %s\n", $1, $2 }' >&2 || true
log "the crowd's summary: $out_dir/room-summary.json; each user: $detail"

# ---- 5. the books, read directly; then /healthz in the same sitting ----------
bad=()
[ "$crowd_rc" = 0 ] || bad+=("the crowd failed (exit $crowd_rc): $(jq -r '(.failures // ["no summary"]) | join("; ")' <<<"$summary")")
books_rc=0
read_books "$logs/seckill" SECKILL_REDIS_URL=redis://127.0.0.1:6379/0 SECKILL_MYSQL_DSN="$dsn" SECKILL_KEY_PREFIX="$prefix" -activity "$id" ||
	books_rc=$?
unread=$(books_unread "$books_rc") orders=0 rem=-
if [ -n "$unread" ]; then
	bad+=("$unread")
else
	mapfile -t -O "${#bad[@]}" bad < <(jq -r '.violations[].message' "$logs/books.json")
	read -r orders rem < <(jq -r '.activities[0] | "\(.rows) \(.redis_remaining // "-")"' "$logs/books.json")
fi
c201=$(jq -r '.units_sold // 0' <<<"$summary")
[ "$c201" -eq "$orders" ] || bad+=("the crowd got $c201 answers 201, the database holds $orders orders")
# The room after the crowd: closed as sold out, and what the activity shows
# of it (waiting: places not yet admitted, not closed ones).
room_after=$(curl -fsS "${bases[0]}/api/v1/activities/$id" | jq -c '.waiting_room // {}' || echo '{}')
room_closed=$(redis HGET "${prefix}seckill:{act:$id}:room" closed)
log "after the crowd: room closed=${room_closed:-no}, activity waiting_room=$room_after"
audit=$(curl -fsS "${bases[0]}/admin/v1/activities/$id/audit" -H "Authorization: Bearer $admin_token" || echo '{}')
echo "$audit" >"$logs/audit.json"

healthz=()
if command -v wrk >/dev/null 2>&1; then
	for b in "${bases[@]}"; do
		healthz+=("$(wrk -t1 -c64 -d5s "$b/healthz" | "$logs/metrictable" rate)")
	done
	healthz_how="wrk -t1 -c64 -d5s, one instance after the other"
else
	while read -r v; do healthz+=("$v"); done < <("$logs/crowd" -healthz 5s -url "$urls" -conns 64 | jq -r '.healthz[].per_s | floor')
	healthz_how="crowd -healthz 5s -conns 64, one instance after the other"
fi
polls=$(jq -r '[.instances[]?.polls_per_s | floor | tostring] | join("/")' <<<"$summary")
log "polls/s per instance during the crowd: $polls; GET /healthz answers/s per instance ($healthz_how): $(IFS=/; echo "${healthz[*]}")"

# ---- 6. chart, summary ------------------------------------------------------
result=PASS
if [ ${#bad[@]} -gt 0 ]; then
	result=FAIL
	for v in "${bad[@]}"; do log "VIOLATION: $v"; done
else
	failed=0
fi
if command -v gnuplot >/dev/null 2>&1 && [ -s "$series" ]; then
	gnuplot <<GP || { log "chart not drawn"; chart=""; }
set terminal pngcairo size 960,640 font "DejaVu Sans,10" noenhanced
set output "$chart"
set datafile separator ","
set multiplot layout 2,1 title "Waiting room: $users users for $stock units, $instances instance(s): $result"
# The legend right of the plots, in a margin wide enough for its longest
# title; 8% headroom above the highest point so no line runs on the frame.
set key outside right top vertical Left reverse
set grid xtics ytics
set lmargin 12
set rmargin 34
set offsets 0, 0, graph 0.08, 0
set arrow from 0, graph 0 to 0, graph 1 nohead dt 2 lc rgb "#888888"
set ylabel "users / polls per s"
set yrange [0:*]
set format x ""
plot "$series" using 1:(\$2 >= 0 ? \$2 : NaN) skip 1 title "waiting (service)" with lines lw 2 lc rgb "#1f77b4", \
     "" using 1:(\$7 + \$8) skip 1 title "crowd: prequeue+waiting" with lines lw 1 dt 2 lc rgb "#17becf", \
     "" using 1:5 skip 1 title "polls/s" with lines lw 1 lc rgb "#7f7f7f"
set format x "%g"
set xlabel "seconds since starts_at"
set ylabel "units"
set yrange [0:*]
plot "$series" using 1:(\$4 >= 0 ? \$4 : NaN) skip 1 title "remaining stock" with lines lw 2 lc rgb "#ff7f0e", \
     "" using 1:(\$3 >= 0 ? \$3 : NaN) skip 1 title "admitted (open)" with lines lw 2 lc rgb "#9467bd", \
     "" using 1:6 skip 1 title "sold (crowd 201s)" with lines lw 2 lc rgb "#2ca02c"
unset multiplot
GP
else
	log "no gnuplot or no series: no PNG chart"
	chart=""
fi

printf 'room: users=%s stock=%s instances=%s result=%s sold=%s orders_db=%s redis_remaining=%s admitted_told_sold_out=%s non_final=%s sell_out_s=%s chi2=%s p=%s eta_within_50pct=%s polls_per_s=%s peak_polls_per_s=%s healthz_per_s=%s audit_admitted_open=%s room_closed=%s waiting_after=%s chart=%s\n' \
	"$users" "$stock" "$instances" "$result" "$c201" "$orders" "$rem" \
	"$(jq -r '.admitted_told_sold_out // "-"' <<<"$summary")" "$(jq -r '.non_final // "-"' <<<"$summary")" \
	"$(jq -r '.sell_out_s // "-"' <<<"$summary")" "$(jq -r '.fairness.chi2 // "-"' <<<"$summary")" "$(jq -r '.fairness.p_value // "-"' <<<"$summary")" \
	"$(jq -r '.eta.share // "-"' <<<"$summary")" "$polls" "$(jq -r '.peak_polls_per_s // "-"' <<<"$summary")" "$(IFS=/; echo "${healthz[*]}")" \
	"$(jq -r '.admitted_open // "-"' <<<"$audit")" "${room_closed:-no}" "$(jq -r '.waiting // "-"' <<<"$room_after")" "${chart:-none}" | tee "$out_dir/room-result.txt"
[ "$result" = PASS ]
