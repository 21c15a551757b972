#!/usr/bin/env bash
# test.sh is the project's test command (README, .ci/run): it makes sure real
# Redis and MariaDB run on loopback (installing them with apt-get on a fresh
# Debian machine), checks the compose file, then runs go vet and the whole
# test suite with the race detector against those servers.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

if ! command -v go >/dev/null 2>&1; then
	echo "test.sh: Go is not on PATH; install Go 1.26 (https://go.dev/dl/) first" >&2
	exit 1
fi

# shellcheck source=scripts/services.sh
source scripts/services.sh

step "services: Redis and MariaDB on loopback"
# gcc: the race detector needs cgo. docker-compose: to validate the compose
# file. jq, curl: the load-test smoke run.
services_ensure docker-compose gcc jq curl

step "services: Redis Cluster and Sentinel on loopback (scale-out tests)"
# The tests that need them skip when these URLs are unset; here they run.
if [ "${SECKILL_SKIP_TOPOLOGIES:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_TOPOLOGIES=1): the cluster and Sentinel tests will skip"
else
	services_topologies
	echo "SECKILL_TEST_REDIS_CLUSTER_URL=$SECKILL_TEST_REDIS_CLUSTER_URL"
	echo "SECKILL_TEST_REDIS_SENTINEL_URL=$SECKILL_TEST_REDIS_SENTINEL_URL"
fi

step "services: MariaDB Galera (3 nodes) behind HAProxy on loopback (order-store failover tests)"
if [ "${SECKILL_SKIP_TOPOLOGIES:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_TOPOLOGIES=1): the Galera tests will skip"
elif services_galera; then
	echo "SECKILL_TEST_GALERA_DSN=$SECKILL_TEST_GALERA_DSN"
else
	# The tests that need it skip, saying so; everything else still runs.
	echo "the Galera cluster did not start here (see the lines above): the Galera tests will skip"
fi

step "docker-compose config"
# The file has no default for its secrets (${VAR:?}); placeholders stand in
# for them here, and every profile is checked.
if command -v docker-compose >/dev/null 2>&1; then
	secrets="SECKILL_ADMIN_TOKEN SECKILL_PAYMENT_SECRET SECKILL_DB_PASSWORD SECKILL_MIGRATE_DB_PASSWORD GRAFANA_ADMIN_PASSWORD SECKILL_GALERA_SST_PASSWORD SECKILL_REDIS_SERVICE_PASSWORD SECKILL_REDIS_EVENTS_PASSWORD"
	placeholders() { for s in $secrets; do [ "$s" = "${1:-}" ] || printf '%s=check\n' "$s"; done; }
	# shellcheck disable=SC2046 # one word per placeholder
	env $(placeholders) docker-compose -f docker-compose.yml config -q
	for secret in $secrets; do
		# shellcheck disable=SC2046
		if env -u "$secret" $(placeholders "$secret") docker-compose -f docker-compose.yml config -q 2>/dev/null; then
			echo "docker-compose.yml starts without $secret: a secret has a silent default" >&2
			exit 1
		fi
	done
	echo "docker-compose.yml is valid"
else
	echo "docker-compose is not installable here: compose file not checked"
fi

step "promtool: Prometheus config and alert rules"
# Debian's prometheus package brings promtool; it is checked when present
# (apt-get install prometheus), not installed for this.
if command -v promtool >/dev/null 2>&1; then
	promtool check config deploy/prometheus/prometheus.yml
	promtool check config deploy/prometheus/prometheus-hosts.yml
	promtool check rules deploy/prometheus/alerts.yml
	if command -v amtool >/dev/null 2>&1; then amtool check-config deploy/alertmanager/alertmanager.yml; fi
else
	echo "promtool is not installed: deploy/prometheus not checked (TestDashboardMetricsExist still parses every query)"
fi

step "go mod tidy -diff"
# go.mod and go.sum must be what go mod tidy writes: a direct dependency
# marked "// indirect", or a line nothing needs, fails here.
tidy_rc=0
tidy_diff=$(go mod tidy -diff) || tidy_rc=$?
if [ "$tidy_rc" != 0 ]; then
	if [ -n "$tidy_diff" ]; then
		printf '%s\n' "$tidy_diff"
		echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2
	else
		echo "go mod tidy -diff failed (exit $tidy_rc; see above): go.mod not checked" >&2
	fi
	exit 1
fi
echo "go.mod and go.sum are tidy"

step "go vet ./..."
go vet ./...

# Lint and vulnerability checks, with tools pinned and built once from the
# Go module proxy into the cached bin (as install-k6.sh does for k6).
bin_dir=${SECKILL_BIN_DIR:-$HOME/.cache/seckill/bin}
golangci_version=v2.15.0
vuln_version=v1.9.0
install_tool() { # name module@version
	if [ ! -x "$bin_dir/$1" ] || [ "$(cat "$bin_dir/$1.version" 2>/dev/null)" != "$2" ]; then
		echo "building $2 (once; a few minutes on a new machine)"
		mkdir -p "$bin_dir"
		GOBIN="$bin_dir" GOFLAGS= go install "$2"
		echo "$2" >"$bin_dir/$1.version"
	fi
}

step "golangci-lint $golangci_version (.golangci.yml)"
if [ "${SECKILL_SKIP_LINT:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LINT=1)"
else
	install_tool golangci-lint "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$golangci_version"
	"$bin_dir/golangci-lint" run ./...
	# The files only the crash tests' builds compile.
	"$bin_dir/golangci-lint" run --build-tags seckill_crashpoints ./...
fi

# Redocly CLI, pinned, from npm (npx keeps it in npm's cache after the first
# run): the OpenAPI document against Redocly's `recommended` rules; the
# one deliberate exception is in .redocly.lint-ignore.yaml.
redocly_version=2.77.0
step "Redocly CLI $redocly_version: docs/openapi.yaml (recommended rules)"
if [ "${SECKILL_SKIP_LINT:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LINT=1)"
elif ! command -v npx >/dev/null 2>&1; then
	echo "OpenAPI lint NOT RUN: npm (npx) is not installed here (apt-get install npm, or Node.js from https://nodejs.org)"
else
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		npx --yes "@redocly/cli@$redocly_version" lint --extends recommended docs/openapi.yaml
fi

step "govulncheck $vuln_version"
# Its database lives at vuln.go.dev; a machine that cannot reach it says so
# and goes on: a missing network is not a vulnerability, and nothing here
# pretends the check ran.
if [ "${SECKILL_SKIP_LINT:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LINT=1)"
else
	install_tool govulncheck "golang.org/x/vuln/cmd/govulncheck@$vuln_version"
	if curl -fsS -o /dev/null --max-time 10 https://vuln.go.dev/index/db.json.gz 2>/dev/null; then
		"$bin_dir/govulncheck" ./...
	else
		echo "govulncheck NOT RUN: its database (https://vuln.go.dev) does not answer from this machine"
	fi
fi

step "go test -race -count=1 ./..."
go test -race -count=1 -timeout "${SECKILL_TEST_TIMEOUT:-45m}" ./...

# The smoke load test drives the built service over HTTP with k6 (built once
# from the Go module proxy, pinned) and checks the books in MariaDB and Redis
# directly. Exit 3 means safe but slower than the latency targets, which on a
# shared 2-core machine is weather, not a defect.
step "load-test smoke (loadtest/run.sh)"
if [ "${SECKILL_SKIP_LOADTEST:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LOADTEST=1)"
else
	rc=0 smoke_out=$(mktemp)
	bash loadtest/run.sh --scenario smoke >"$smoke_out" || rc=$?
	cat "$smoke_out"
	case $rc in
	0) ;;
	3) echo "load-test smoke: no oversell, no lost order; a latency target was missed on this machine" ;;
	*) exit "$rc" ;;
	esac
	# The README promises the PNG chart of every run (run.sh installs gnuplot).
	chart_png=$(sed -n 's/^loadtest: report=.* chart=\(.*\.png\)$/\1/p' "$smoke_out")
	rm -f "$smoke_out"
	if [ -z "$chart_png" ] || [ ! -s "$chart_png" ]; then
		echo "load-test smoke: no PNG chart was drawn (chart=${chart_png:-none}; loadtest/chart.sh needs gnuplot)" >&2
		exit 1
	fi
	echo "chart: $chart_png"
fi

# The quantity scenario: buyers ask for 1..5 units each; no oversell in
# units, and every 201's order in MariaDB with the units it answered. It
# reuses the smoke's build (loadtest/out/bin): about 15 s more here.
step "load-test quantity (loadtest/run.sh --scenario quantity)"
if [ "${SECKILL_SKIP_LOADTEST:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LOADTEST=1)"
else
	rc=0
	bash loadtest/run.sh --scenario quantity || rc=$?
	case $rc in
	0) ;;
	3) echo "load-test quantity: no oversell in units, no lost order; a latency target was missed on this machine" ;;
	*) exit "$rc" ;;
	esac
fi

# bench.sh, as short as it goes (one concurrency, 2 s, no crowd): it must
# run its steps, balance the books and exit 0, which also drops its database
# and Redis keys; --crowd 0 must skip the crowd, not hand the tool 0 buyers.
step "load-test bench smoke (loadtest/bench.sh --conns 4 --duration 2s --crowd 0)"
if [ "${SECKILL_SKIP_LOADTEST:-0}" = 1 ]; then
	echo "skipped (SECKILL_SKIP_LOADTEST=1)"
else
	bench_out=$(bash loadtest/bench.sh --conns 4 --duration 2s --stock 100000 --crowd 0) || {
		printf '%s\n' "$bench_out"
		echo "loadtest/bench.sh --crowd 0 failed (see above)" >&2
		exit 1
	}
	printf '%s\n' "$bench_out"
	grep -q '^Crowd: skipped' <<<"$bench_out" || { echo "loadtest/bench.sh --crowd 0 did not skip the crowd" >&2; exit 1; }
fi

# docs/DEPLOY.md's walkthrough, one instance on the Redis and MariaDB above:
# its eleven commands as written make a sale, a payment, an audit and a
# reconcile, twice, the second time on a server the first filled
# (scripts/walkthrough.sh).
step "docs/DEPLOY.md walkthrough (scripts/walkthrough.sh)"
bash scripts/walkthrough.sh
