#!/usr/bin/env bash
# chaos.sh runs one long randomized fault campaign (internal/testkit/chaos) against
# the built service: three instances, a Redis of its own under Sentinel (or
# the Cluster), the order store on a Galera cluster of its own behind
# HAProxy (ports 3320-3323, so its node kills disturb no test; a single
# MariaDB when Galera cannot start), the stubs, and Toxiproxy on every link.
#
#   bash loadtest/chaos.sh --seed N --duration D [--redis sentinel|cluster] [--keep DIR]
#
# Each violation is printed with the history around it; the last line is
# exactly `CHAOS seed=N faults=F kinds=K ops=O violations=V`, and the exit
# status is 0 only when V is 0.
set -euo pipefail
cd "$(dirname "$0")/.."

seed=0 duration=10m redis=sentinel keep=""
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--redis) redis=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	*) echo "usage: $0 --seed N --duration D [--redis sentinel|cluster] [--keep DIR]" >&2; exit 2 ;;
	esac
done

# SECKILL_CHAOS_GALERA_DIR, _PORT and _GCOMM_PORT give two campaigns at once
# a cluster each.
export SECKILL_GALERA_DIR=${SECKILL_CHAOS_GALERA_DIR:-/tmp/seckill-chaos-galera} \
	SECKILL_GALERA_PORT=${SECKILL_CHAOS_GALERA_PORT:-3320} SECKILL_GALERA_GCOMM_PORT=${SECKILL_CHAOS_GALERA_GCOMM_PORT:-4600} \
	SECKILL_GALERA_CHECK_INTER=${SECKILL_GALERA_CHECK_INTER:-1500}
# shellcheck source=scripts/services.sh
source scripts/services.sh
services_ensure >&2
if ! services_galera >&2; then
	echo "chaos: the Galera cluster did not start: the order store is the single MariaDB" >&2
	unset SECKILL_TEST_GALERA_DSN SECKILL_TEST_GALERA_NODES SECKILL_TEST_GALERA_DIR
fi

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/seckill" ./cmd/seckill
go build -o "$bin/chaos" ./loadtest/chaos
[ -z "$keep" ] || mkdir -p "$keep"
"$bin/chaos" -seed "$seed" -duration "$duration" -redis "$redis" -seckill "$bin/seckill" -repo "$PWD" ${keep:+-dir "$keep"}
