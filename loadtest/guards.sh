#!/usr/bin/env bash
# guards.sh takes each guard of docs/FAULTS.md ("Guards taken away") away on a
# scratch copy of the tree, builds that tree's service and runs the fault
# campaign (loadtest/chaos) against it with the seeds that caught the guard
# before, on the single MariaDB, two campaigns at a time. A guard is shown
# when at least one of its seeds reports a violation; `main` runs the same
# seeds on the tree as it is, where every campaign must report none.
#
#   bash loadtest/guards.sh [--only receipt|fence|status|lockread|room|admit|events|main] [--logs DIR]
#
# Each campaign prints `GUARD name seed=N redis=R violations=V` (its whole
# output in DIR/name-N.log); the last lines are one verdict per guard. The
# exit status is 0 when every guard was caught and main had no violation.
# The mutate_ functions are called by name ("mutate_$name").
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/.."

only="" logs=$(mktemp -d /tmp/seckill-guards.XXXX)
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only=$2; shift 2 ;;
	--logs) logs=$2; mkdir -p "$logs"; shift 2 ;;
	*) echo "usage: $0 [--only receipt|fence|status|lockread|room|admit|events|main] [--logs DIR]" >&2; exit 2 ;;
	esac
done

# Each guard: the seeds (seed:redis) and duration that caught it in the
# fourth sitting (docs/FAULTS.md); its mutation is in mutate_<name>.
declare -A seeds=(
	[receipt]="318:sentinel 322:sentinel"
	[fence]="318:sentinel 322:sentinel"
	[status]="320:sentinel 312:sentinel 324:sentinel 313:cluster"
	[lockread]="107:cluster 108:sentinel 104:sentinel 106:sentinel"
	[room]="4810:sentinel 4808:sentinel"
	[admit]="4812:sentinel"
	[events]="4808:sentinel"
	[main]="318:sentinel 320:sentinel"
)
declare -A duration=([receipt]=3m [fence]=3m [status]=5m [lockread]=60s [room]=150s [admit]=60s [events]=60s [main]=3m)
order="receipt fence status lockread room admit events main"
[ -z "$only" ] || order=$only

# replace FILE FROM TO replaces the one occurrence of the literal FROM; a
# FROM found other than once means the guard moved and this script is stale.
replace() {
	local f=$1 n
	n=$(FROM=$2 perl -0 -ne '$c += () = /\Q$ENV{FROM}\E/g; END { print $c + 0 }' "$f")
	if [ "$n" != 1 ]; then
		echo "guards: '$2' occurs $n times in $f, not once: the guard moved; update loadtest/guards.sh" >&2
		exit 2
	fi
	FROM=$2 TO=$3 perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$f"
}

# The deduct receipt: a resent deduct takes its units again.
mutate_receipt() { replace internal/stock/deduct.lua 'if receipt then' 'if false then'; }
# The fence check of the group's claim: the stale test on the locked row and
# the UPDATE's own `fence < ?`.
mutate_fence() {
	replace internal/order/group.go 'case a.Fence >= p.fence:' 'case a.Fence < 0:'
	replace internal/order/group.go '(id = ? AND fence < ? AND' '(id = ? AND ? > 0 AND'
}
# Expiry's status condition: a status change no longer requires the status
# it read.
mutate_status() { replace internal/order/status.go 'AND status = ? AND' 'AND (status = ? OR TRUE) AND'; }
# The locking read after an unknown COMMIT: a plain read, which does not wait
# for a COMMIT still on its way. The fence-out write after it (for Galera)
# goes too: on one server its UPDATE waits for the row's lock as the locking
# read does, so with it left in the guard is not taken away.
mutate_lockread() {
	replace internal/order/batch.go 'if err := lockActivity(tx, activityID, "id", &a); err != nil {' \
		'if err := tx.Raw("SELECT id FROM activities WHERE id = ?", activityID).Scan(&a).Error; err != nil {'
	replace internal/order/batch.go 'if err := fenceOut(tx, "activities", "fence", activityID); err != nil {' \
		'if err := error(nil); err != nil {'
}
# The waiting room's admission check on a purchase: every buyer may go on,
# before the deduct and in it (seeds of 2026-11-27, by hand: docs/FAULTS.md).
mutate_room() {
	replace internal/purchase/rooms.go 'return s.holders.holderOr(ctx, a.ID, userID, notAdmitted()), true' 'return nil, false'
	replace internal/stock/deduct.lua "if n > 0 and redis.call('HGET', KEYS[4], 'on') == '1' then" 'if false then'
}
# Open admissions counted against the units left: the room admits two more.
mutate_admit() { replace internal/waitingroom/admit.lua 'local places = math.floor(free / hold)' 'local places = math.floor(free / hold) + 2'; }
# The order event of a status change: an expiry writes none.
mutate_events() {
	replace internal/order/events.go '	ev := newEventRow(row.order(), row.EventSequence, now())' \
		'	if row.order().Status == seckill.OrderStatusExpired {
		return row, nil
	}
	ev := newEventRow(row.order(), row.EventSequence, now())'
}
mutate_main() { :; }

# shellcheck source=scripts/services.sh
source scripts/services.sh
services_ensure >&2
unset SECKILL_TEST_GALERA_DSN SECKILL_TEST_GALERA_NODES SECKILL_TEST_GALERA_DIR

work=$(mktemp -d /tmp/seckill-guards-tree.XXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/chaos" ./loadtest/chaos

# build NAME: a copy of the tracked tree with the guard taken away, built.
build() {
	local name=$1 tree=$work/$1
	mkdir -p "$tree"
	git ls-files -z | xargs -0 cp --parents -t "$tree"
	(cd "$tree" && "mutate_$name" && go build -o "$work/seckill-$name" ./cmd/seckill)
}

# campaign NAME SEED REDIS: one campaign; prints its GUARD line.
campaign() {
	local name=$1 seed=$2 redis=$3 log=$logs/$1-$2.log v
	"$work/chaos" -seed "$seed" -duration "${duration[$name]}" -redis "$redis" \
		-seckill "$work/seckill-$name" -repo "$PWD" > "$log" 2>&1 || true
	v=$(sed -n 's/^CHAOS .*violations=\([0-9]*\)$/\1/p' "$log" | tail -1)
	echo "GUARD $name seed=$seed redis=$redis violations=${v:-none: the campaign did not finish, see $log}"
}

verdicts=() failed=0
for name in $order; do
	[ -n "${seeds[$name]:-}" ] || { echo "guards: no guard named $name" >&2; exit 2; }
	build "$name"
	results=$(
		# shellcheck disable=SC2086 # one word per seed
		set -- ${seeds[$name]}
		while [ $# -gt 0 ]; do
			campaign "$name" "${1%%:*}" "${1##*:}" &
			if [ $# -gt 1 ]; then campaign "$name" "${2%%:*}" "${2##*:}" & shift; fi
			shift
			wait
		done
	)
	echo "$results"
	caught=$(grep -c 'violations=[1-9]' <<< "$results" || true)
	unfinished=$(grep -c 'violations=none' <<< "$results" || true)
	total=$(wc -w <<< "${seeds[$name]}")
	if [ "$name" = main ]; then
		if [ "$caught" = 0 ] && [ "$unfinished" = 0 ]; then verdict="main: no violation in $total campaigns"
		else verdict="main: FAILED: $caught of $total campaigns with violations, $unfinished unfinished"; failed=1; fi
	elif [ "$caught" -gt 0 ]; then verdict="$name: caught by $caught of $total seeds"
	else verdict="$name: NOT CAUGHT by any of $total seeds ($unfinished unfinished)"; failed=1; fi
	verdicts+=("$verdict")
done
echo "guards: logs in $logs"
printf '%s\n' "${verdicts[@]}"
exit $failed
