#!/usr/bin/env bash
# install-k6.sh puts the pinned k6 into a cached local bin and prints its path.
# Idempotent: an existing binary of the pinned version is reused, so only the
# first run pays the 1-3 minute build from the Go module proxy.
#
#   K6=$(bash loadtest/install-k6.sh)
#
# SECKILL_BIN_DIR overrides the cache (default ~/.cache/seckill/bin).
set -euo pipefail

K6_VERSION=v1.8.1 # go.k6.io/k6/v2 is not served by the module proxy; v1 is pinned
bin_dir=${SECKILL_BIN_DIR:-$HOME/.cache/seckill/bin}
k6="$bin_dir/k6"

if [ -x "$k6" ] && "$k6" version 2>/dev/null | grep -q "k6 $K6_VERSION "; then
	echo "$k6"
	exit 0
fi

mkdir -p "$bin_dir"
echo "install-k6: building go.k6.io/k6@$K6_VERSION into $bin_dir (1-3 minutes, once)" >&2
# GOFLAGS from the project (e.g. -mod=vendor) must not leak into this build:
# k6 is built from its own module, outside the project's go.mod.
(cd "$bin_dir" && GOFLAGS= GOBIN="$bin_dir" go install "go.k6.io/k6@$K6_VERSION") >&2
"$k6" version >&2
echo "$k6"
