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
# gcc: the race detector needs cgo. docker-compose: to validate the compose file.
services_ensure docker-compose gcc

step "docker-compose config"
if command -v docker-compose >/dev/null 2>&1; then
	docker-compose -f docker-compose.yml config -q
	echo "docker-compose.yml is valid"
else
	echo "docker-compose is not installable here: compose file not checked"
fi

step "go vet ./..."
go vet ./...

step "go test -race -count=1 ./..."
go test -race -count=1 -timeout "${SECKILL_TEST_TIMEOUT:-12m}" ./...
