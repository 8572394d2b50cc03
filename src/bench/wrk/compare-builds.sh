#!/usr/bin/env bash
# Two builds of the gateway side by side in one run: beacons, ack=accepted and ack=commit at 64 connections, in
# alternating rounds (A B A B …), so a change is measured against the build before it on the same machine, in the same
# minutes. wrk -t2 without a Lua response callback (its cost would hide the server's); non-2xx counted from wrk's
# summary, and the SUM of each build's table checked against what it acknowledged.
#
#   src/bench/wrk/compare-builds.sh BEFORE.jar AFTER.jar [CONFIG.yaml]
#
# Environment: DB=postgres|mysql ROUNDS=3 DURATION=10s WARMUP=3s THREADS=2 CONNECTIONS=64 PORT=18090
#              OUT=/tmp/counter-gateway-compare MAX_LOAD=1.0
set -euo pipefail
cd "$(dirname "$0")/../../.."
BEFORE=${1:?the jar of the build before}; AFTER=${2:?the jar of the build after}
DB=${DB:-postgres}; CONFIG=${3:-conf/$DB.yaml}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-3s}; THREADS=${THREADS:-2}; C=${CONNECTIONS:-64}
PORT=${PORT:-18090}; OUT=${OUT:-/tmp/counter-gateway-compare}; MAX_LOAD=${MAX_LOAD:-1.0}
JAR=$AFTER; BENCH_JAR=$AFTER  # common.sh checks both; nothing here needs the benchmark jar
WRK_DIR=src/bench/wrk
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"

# the configuration plus a beacon namespace without the bot filter (namespaces: is the file's last block)
# every beacon limit the build knows off (a build refuses keys it does not know, so each gets a file of its own)
beacon_config() {  # beacon_config BUILD JAR: the configuration file for that build
  local keys="dropBots: false, perClientPerMinute: 0, idsPerClientPerHour: 0" file="$OUT/gateway-$1.yaml"
  if unzip -p "$2" io/countergateway/config/NamespaceOptions.class | grep -aq perPagePerMinute; then
    keys="$keys, perPagePerMinute: 0, newIdsPerHour: 0"
  fi
  { cat "$CONFIG"; echo "  beacons-plain: { slots: 16, public: true, beacon: { $keys } }"; } >"$file"
  echo "$file"
}
for build in before after; do drop_gateway_tables "compare_$build"; done

GATEWAY_PID=
cleanup() { [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true; }
trap cleanup EXIT
start() { start_gateway "$1" "$2" "$(beacon_config "$1" "$2")" CG_DATABASE_TABLE="compare_$1"; }  # start BUILD JAR
stop() { kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=; }

# workload NAME → wrk arguments
args() {
  case $1 in
    beacon) echo "$G/v1/beacon/beacons-plain/home" ;;
    accepted) echo "-s $WRK_DIR/post.lua $G/v1/counters/downloads/hot/increments?ack=accepted" ;;
    commit) echo "-s $WRK_DIR/post.lua $G/v1/counters/downloads/hot/increments" ;;
  esac
}
run() { # run BUILD WORKLOAD ROUND
  # shellcheck disable=SC2046
  wrk -t"$THREADS" -c"$C" -d"$DURATION" --latency -H "User-Agent: $UA" $(args "$2") >"$OUT/$1-$2-$3.txt" 2>&1
}

# wrk counts the answers it read; when a run ends, up to one request per connection has been sent (and may have been
# counted) without its answer read: the SUM lies in [acknowledged, acknowledged + runs × connections]
declare -A ACKED=([before]=0 [after]=0)
RUNS=0
WORKLOADS="beacon accepted commit"
for round in $(seq 1 "$ROUNDS"); do
  # alternate which build goes first, so neither always runs on a warmer machine
  order="before after"; [ $((round % 2)) -eq 0 ] && order="after before"
  for build in $order; do
    jar=$BEFORE; [ "$build" = after ] && jar=$AFTER
    echo "round $round, $build: load $(awk '{print $1}' /proc/loadavg) (idle when ≤ $MAX_LOAD before the first)" >&2
    start "$build" "$jar"
    for workload in $WORKLOADS; do
      DURATION=$WARMUP run "$build" "$workload" warmup
      ACKED[$build]=$((ACKED[$build] + $(requests "$build-$workload-warmup") - $(non2xx "$build-$workload-warmup")))
      run "$build" "$workload" "$round"
      ACKED[$build]=$((ACKED[$build] + $(requests "$build-$workload-$round") - $(non2xx "$build-$workload-$round")))
      [ "$build" = before ] && RUNS=$((RUNS + 2))
    done
    stop
  done
done

echo
echo "| workload | round | before req/s (p99) | after req/s (p99) | after / before | non-2xx before / after |"
echo "|---|---|---:|---:|---:|---:|"
for workload in $WORKLOADS; do
  for round in $(seq 1 "$ROUNDS"); do
    b="before-$workload-$round"; a="after-$workload-$round"
    printf '| %s | %s | %s (%s) | %s (%s) | %s | %s / %s |\n' "$workload" "$round" "$(rps "$b")" "$(p99 "$b")" \
      "$(rps "$a")" "$(p99 "$a")" "$(awk -v a="$(rps "$a")" -v b="$(rps "$b")" 'BEGIN {printf "%.2f", a / b}')" \
      "$(non2xx "$b")" "$(non2xx "$a")"
  done
done
echo
for build in before after; do
  sum=$(sql "SELECT COALESCE(SUM(count), 0) FROM compare_$build")
  beacons=$(sql "SELECT COALESCE(SUM(count), 0) FROM compare_$build WHERE record_type = 'beacons-plain'")
  unanswered=$((sum - ACKED[$build]))
  echo "$build: acknowledged ${ACKED[$build]}, SUM in compare_$build $sum (beacons $beacons): $unanswered more," \
    "$([ "$unanswered" -ge 0 ] && [ "$unanswered" -le $((RUNS * C)) ] && echo "OK (at most $((RUNS * C)) sent unanswered)" \
      || echo "MISMATCH (expected 0 to $((RUNS * C)) more)")"
done
