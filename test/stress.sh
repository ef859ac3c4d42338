#!/usr/bin/env bash
# make test-stress: the whole suite under load, to catch tests whose outcome depends on
# scheduling (issue 26). Two busy loops (one per core of the CI machine) run beside
# `go test -race -count=$COUNT ./...` (the e2e suite included) and then the fleet suite,
# $COUNT times. Bounded: every go test has a -timeout, the hogs are killed on exit and
# themselves stop after $HOG_SECONDS whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT="${COUNT:-3}"
HOGS="${HOGS:-2}"
HOG_SECONDS="${HOG_SECONDS:-3600}"
GO="${GO:-go}"
export GOFLAGS="${GOFLAGS:--mod=mod}"

pids=()
stop() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap stop EXIT
for ((i = 0; i < HOGS; i++)); do
  timeout "$HOG_SECONDS" sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "stress: $HOGS busy loops beside the suite, count=$COUNT"

start=$SECONDS
"$GO" test -race -count="$COUNT" -timeout 40m ./...
echo "stress: go test -race -count=$COUNT ./... passed in $((SECONDS - start)) s"

start=$SECONDS
for ((i = 1; i <= COUNT; i++)); do
  SLUICE_FLEET_TEST=1 "$GO" test -count=1 -timeout 5m ./test/fleet/
done
echo "stress: the fleet suite passed $COUNT times in $((SECONDS - start)) s"
