#!/usr/bin/env bash
# Where a fresh gateway's beacon tail comes from: each round starts a gateway with the journal on, then one with it off
# (the order alternating), warms only ack=commit (as the sequence section of run-round4.sh does), then runs beacons
# twice: "cold" (the beacon path's first seconds in this process) and "warm" (the same again). If the cold tail is
# there with the journal off too, it is the cold code path (JIT), not the journal's first segments.
#
#   src/bench/wrk/cold-beacon.sh                   # PostgreSQL 127.0.0.1:5432, 2 rounds of 8 s runs
#   DB=mysql ROUNDS=3 src/bench/wrk/cold-beacon.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}; ROUNDS=${ROUNDS:-2}; DURATION=${DURATION:-8s}; PORT=${PORT:-18190}
JAR=${JAR:-target/counter-gateway.jar}; BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
OUT=${OUT:-/tmp/counter-gateway-cold-beacon}; WRK_DIR=src/bench/wrk
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"

GATEWAY_PID=
trap '[ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true' EXIT
echo "| round | journal | beacon run | req/s | p50 | p99 | 1-minute load |"
echo "|---|---|---|---:|---:|---:|---:|"
for round in $(seq 1 "$ROUNDS"); do
  modes="on off"; [ $((round % 2)) = 0 ] && modes="off on"
  for mode in $modes; do
    drop_gateway_tables cold_beacon; rm -rf "$OUT/journal"
    start_gateway "cold-$mode-$round" "$JAR" "conf/$DB.yaml" CG_DATABASE_TABLE=cold_beacon CG_JOURNAL_DIR="$OUT/journal" \
      CG_JOURNAL_ENABLED=$([ "$mode" = on ] && echo true || echo false) \
      CG_NAMESPACES_PAGEVIEWS_BEACON_PER_CLIENT_PER_MINUTE=0 CG_NAMESPACES_PAGEVIEWS_BEACON_IDS_PER_CLIENT_PER_HOUR=0
    wrk -t2 -c64 -d3s -s "$WRK_DIR/post.lua" "$G/v1/counters/pageviews/hot/increments" >/dev/null
    for run in cold warm; do
      name="cold-$mode-$round-$run"
      wrk -t2 -c64 -d"$DURATION" --latency -H "User-Agent: $UA" "$G/v1/beacon/pageviews/hot" >"$OUT/$name.txt" 2>&1
      echo "| $round | $mode | $run | $(rps "$name") | $(awk '$1 == "50%" {print $2}' "$OUT/$name.txt") |" \
        "$(awk '$1 == "99%" {print $2}' "$OUT/$name.txt") | $(awk '{print $1}' /proc/loadavg) |"
    done
    kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=
  done
done
