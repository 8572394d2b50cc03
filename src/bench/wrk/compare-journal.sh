#!/usr/bin/env bash
# The write-ahead journal's cost: beacons and ack=accepted at 64 connections with the journal off, fsync always and
# fsync everyMs, beside the plain Vert.x 204 server, in alternating rounds of one build (the modes are CG_JOURNAL_*
# overrides). Prints req/s and p99 per round, the ratios to "off", each round's group commit (increments per fsync:
# the gateway's increments taken over its fsyncs, every verticle's), the journal's fsync quantiles and bytes per
# increment read from /metrics, and checks each mode's table SUM against what it acknowledged.
#
#   src/bench/wrk/compare-journal.sh [GATEWAY.jar]
#
# Environment: DB=postgres|mysql ROUNDS=3 DURATION=10s WARMUP=3s THREADS=2 CONNECTIONS=64 PORT=18090 PLAIN_PORT=18091
#              MODES="off always everyMs" OUT=/tmp/counter-gateway-journal
set -euo pipefail
cd "$(dirname "$0")/../../.."
JAR=${1:-target/counter-gateway.jar}; BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
DB=${DB:-postgres}; CONFIG=conf/$DB.yaml
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-3s}; THREADS=${THREADS:-2}; C=${CONNECTIONS:-64}
PORT=${PORT:-18090}; PLAIN_PORT=${PLAIN_PORT:-18091}; OUT=${OUT:-/tmp/counter-gateway-journal}
MODES=${MODES:-off always everyMs}
WRK_DIR=src/bench/wrk
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"

GATEWAY_CONFIG="$OUT/gateway.yaml"
{ cat "$CONFIG"; echo "  beacons-plain: { slots: 16, public: true, beacon: { dropBots: false, perClientPerMinute: 0, perPagePerMinute: 0, idsPerClientPerHour: 0, newIdsPerHour: 0 } }"; } >"$GATEWAY_CONFIG"
for mode in $MODES; do drop_gateway_tables "journal_$mode"; rm -rf "$OUT/journal-$mode"; done

GATEWAY_PID=; PLAIN_PID=
cleanup() {
  [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true
  [ -n "$PLAIN_PID" ] && kill "$PLAIN_PID" 2>/dev/null || true
}
trap cleanup EXIT
java -jar "$BENCH_JAR" plain-server --port "$PLAIN_PORT" >"$OUT/plain.log" 2>&1 &
PLAIN_PID=$!
for _ in $(seq 1 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PLAIN_PORT/" || true)" = 204 ] && break; sleep 0.5
done

start() { # start MODE
  local enabled=true fsync=$1
  [ "$1" = off ] && { enabled=false; fsync=always; }
  start_gateway "$1" "$JAR" "$GATEWAY_CONFIG" CG_DATABASE_TABLE="journal_$1" CG_JOURNAL_ENABLED=$enabled \
    CG_JOURNAL_FSYNC="$fsync" CG_JOURNAL_DIR="$OUT/journal-$1"
}
stop() { kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=; }

args() {
  case $1 in
    beacon) echo "$G/v1/beacon/beacons-plain/home" ;;
    accepted) echo "-s $WRK_DIR/post.lua $G/v1/counters/downloads/hot/increments?ack=accepted" ;;
    plain) echo "http://127.0.0.1:$PLAIN_PORT/" ;;
  esac
}
run() { # run NAME WORKLOAD ROUND
  # shellcheck disable=SC2046
  wrk -t"$THREADS" -c"$C" -d"$DURATION" --latency -H "User-Agent: $UA" $(args "$2") >"$OUT/$1-$2-$3.txt" 2>&1
}
metric() { # metric MODE NAME [ROUND] → the sum over its series in the mode's /metrics scrape (of ROUND, else the last)
  awk -v n="$2" 'index($0, n"{") == 1 || index($0, n" ") == 1 {s += $NF} END {printf "%.6f", s}' \
    "$OUT/$1-metrics${3:+-$3}.txt"
}

declare -A ACKED
WORKLOADS="beacon accepted"
for mode in $MODES; do ACKED[$mode]=0; done
for round in $(seq 1 "$ROUNDS"); do
  order=$MODES; [ $((round % 2)) -eq 0 ] && order=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
  run plain plain "$round"
  for mode in $order; do
    echo "round $round, $mode: load $(awk '{print $1}' /proc/loadavg)" >&2
    start "$mode"
    for workload in $WORKLOADS; do
      DURATION=$WARMUP run "$mode" "$workload" warmup
      ACKED[$mode]=$((ACKED[$mode] + $(requests "$mode-$workload-warmup") - $(non2xx "$mode-$workload-warmup")))
      run "$mode" "$workload" "$round"
      ACKED[$mode]=$((ACKED[$mode] + $(requests "$mode-$workload-$round") - $(non2xx "$mode-$workload-$round")))
    done
    curl -s "$G/metrics" >"$OUT/$mode-metrics.txt"
    cp "$OUT/$mode-metrics.txt" "$OUT/$mode-metrics-$round.txt"
    stop
  done
done

echo
echo "| workload | round | plain 204 | $(echo "$MODES" | sed 's/ / | /g') | $(for m in $MODES; do printf '%s / off | ' "$m"; done)"
for workload in $WORKLOADS; do
  for round in $(seq 1 "$ROUNDS"); do
    line="| $workload | $round | $(rps "plain-plain-$round")"
    for mode in $MODES; do line="$line | $(rps "$mode-$workload-$round") ($(p99 "$mode-$workload-$round"))"; done
    for mode in $MODES; do
      line="$line | $(awk -v a="$(rps "$mode-$workload-$round")" -v b="$(rps "off-$workload-$round" 2>/dev/null || echo 0)" \
        'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}')"
    done
    echo "$line |"
  done
done
echo
for mode in $MODES; do
  [ "$mode" = off ] && continue
  line="$mode, increments per fsync (group commit) by round:"
  for round in $(seq 1 "$ROUNDS"); do
    line="$line $(awk -v t="$(metric "$mode" gateway_increments_taken_total "$round")" \
      -v f="$(metric "$mode" gateway_journal_fsync_duration_seconds_count "$round")" \
      'BEGIN {if (f > 0) printf "%.1f", t / f; else printf "-"}')"
  done
  echo "$line"
done
for mode in $MODES; do
  [ "$mode" = off ] && continue
  count=$(metric "$mode" gateway_journal_fsync_duration_seconds_count)
  taken=$(metric "$mode" gateway_increments_taken_total)
  bytes=$(metric "$mode" gateway_journal_appended_bytes_total)
  quantiles=""
  for q in 0.5 0.9 0.99 0.999; do
    worst=$(grep "^gateway_journal_fsync_duration_seconds{" "$OUT/$mode-metrics.txt" | grep "quantile=\"$q\"" \
      | awk '{print $NF * 1000}' | sort -g | tail -1)
    quantiles="$quantiles p$q ${worst}ms"
  done
  echo "$mode (last round): $count fsyncs for $taken increments;$quantiles (worst verticle);" \
    "journal bytes per million increments $(awk -v b="$bytes" -v t="$taken" 'BEGIN {if (t > 0) printf "%.0f", b / t * 1e6}')"
done
for mode in $MODES; do
  sum=$(sql "SELECT COALESCE(SUM(count), 0) FROM journal_$mode")
  # wrk does not count the requests in flight when it stops (at most CONNECTIONS per run), the table does
  slack=$((C * 2 * ROUNDS * 2))
  verdict=MISMATCH
  [ "$sum" -ge "${ACKED[$mode]}" ] && [ "$sum" -le $((ACKED[$mode] + slack)) ] && verdict=OK
  echo "$mode: acknowledged ${ACKED[$mode]}, SUM in journal_$mode $sum (at most $slack more: in flight at the stops) $verdict"
done
