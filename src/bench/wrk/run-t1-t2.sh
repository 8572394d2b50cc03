#!/usr/bin/env bash
# T1, T2 and T5 of src/DESIGN.md §7 with wrk, side by side with the plain Vert.x 204 server, in one run on one machine.
#
#   src/bench/wrk/run-t1-t2.sh                 # gateway on PostgreSQL 127.0.0.1:5432, database test
#   DB=mysql src/bench/wrk/run-t1-t2.sh        # gateway on MySQL/MariaDB 127.0.0.1:3306, database test
#
# It starts target/counter-gateway.jar as the gateway (conf/$DB.yaml, table bench_wrk, ack=commit) and
# target/counter-gateway-bench.jar as `plain-server` (answers 204, no database), warms both up, then runs with wrk:
#   T1  one hot counter, 1 increment/request        increment.lua  (plain server, then gateway)
#   T2  POST /v1/increments, BATCH increments/req    batch.lua      (plain server, then gateway)
#   T5  T1 again with READERS connections reading the hot counter at the same time (read.lua); READERS=0 skips it
# At the end it stops the gateway (SIGTERM: it flushes what is pending) and checks that the table holds every
# acknowledged increment (plus at most what was in flight when wrk stopped).
#
# Environment: DB=postgres|mysql DURATION=20s WARMUP=5s THREADS=1 CONNECTIONS=64 BATCH=100 BATCH_COUNTERS=1000
#              READERS=16 GATEWAY_PORT=18080 PLAIN_PORT=18081 JAVA_OPTS= JAR=target/counter-gateway.jar
#              BENCH_JAR=target/counter-gateway-bench.jar OUT=/tmp/counter-gateway-wrk (raw wrk outputs and server logs)
# Missing jars are built with mvn -q -Pbench package -DskipTests.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-5s}
THREADS=${THREADS:-1}
CONNECTIONS=${CONNECTIONS:-64}
BATCH=${BATCH:-100}
BATCH_COUNTERS=${BATCH_COUNTERS:-1000}
READERS=${READERS:-16}
GATEWAY_PORT=${GATEWAY_PORT:-18080}
PLAIN_PORT=${PLAIN_PORT:-18081}
JAR=${JAR:-target/counter-gateway.jar}
BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
OUT=${OUT:-/tmp/counter-gateway-wrk}
TABLE=bench_wrk
WRK_DIR=src/bench/wrk
JAVA_OPTS=${JAVA_OPTS:-}

# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
drop_gateway_tables "$TABLE"

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

# shellcheck disable=SC2086
java $JAVA_OPTS -jar "$BENCH_JAR" plain-server --port "$PLAIN_PORT" >"$OUT/plain.log" 2>&1 &
PIDS+=($!)
# shellcheck disable=SC2086
CG_NAMESPACES_PAGEVIEWS_BEACON_PER_CLIENT_PER_MINUTE=0 CG_NAMESPACES_PAGEVIEWS_BEACON_IDS_PER_CLIENT_PER_HOUR=0 \
  CG_HTTP_PORT=$GATEWAY_PORT CG_DATABASE_TABLE=$TABLE java $JAVA_OPTS -jar "$JAR" --config "conf/$DB.yaml" >"$OUT/gateway.log" 2>&1 &
GATEWAY_PID=$!
PIDS+=($GATEWAY_PID)

wait_for() { # url expected-status
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X "${3:-GET}" "$1" || true)" = "$2" ] && return 0
    sleep 0.5
  done
  echo "no answer $2 from $1; see $OUT/*.log" >&2; exit 1
}
wait_for "http://127.0.0.1:$PLAIN_PORT/" 204
wait_for "http://127.0.0.1:$GATEWAY_PORT/health/ready" 200

HOT_ACKED=0; HOT_RUNS=0; BATCH_ACKED=0; BATCH_RUNS=0
ROWS=()

group() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }  # 1234567 -> 1,234,567
to_ms() { awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; printf "%.2f", v}'; }
figure() { # file key
  case "$2" in
    rps) awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$1" ;;
    p50) awk '$1=="50%" {print $2}' "$1" | to_ms ;;
    p99) awk '$1=="99%" {print $2}' "$1" | to_ms ;;
    acked) awk '/^acknowledged/ {print $2}' "$1" ;;
    other) awk -v ok="$3" '/^status/ {gsub(":","",$2); if ($2 != ok) n += $3} END {print n+0}' "$1" ;;
    errors) awk '/Socket errors|Non-2xx/ {print}' "$1" | tr '\n' ' ' ;;
  esac
}

run() { # name server-port expect script duration [env...]
  local name=$1 port=$2 expect=$3 script=$4 duration=$5; shift 5
  local file="$OUT/$name.txt"
  env EXPECT="$expect" "$@" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$duration" --latency -s "$WRK_DIR/$script" \
    "http://127.0.0.1:$port" >"$file" 2>&1
  echo "$file"
}

record() { # label file per-request expect
  local file=$2 per=$3 rps
  rps=$(figure "$file" rps)
  ROWS+=("| $1 | $(group "$rps") | $(group $((rps * per))) | $(figure "$file" p50) | $(figure "$file" p99) | $(group "$(figure "$file" acked)") | $(figure "$file" other "$4") |")
}

echo "warming up both servers ($WARMUP each) ..." >&2
run warmup-plain "$PLAIN_PORT" 204 increment.lua "$WARMUP" >/dev/null
f=$(run warmup-gateway "$GATEWAY_PORT" 200 increment.lua "$WARMUP")
HOT_ACKED=$((HOT_ACKED + $(figure "$f" acked))); HOT_RUNS=$((HOT_RUNS + 1))
run warmup-plain-batch "$PLAIN_PORT" 204 batch.lua "$WARMUP" BATCH="$BATCH" COUNTERS="$BATCH_COUNTERS" >/dev/null
f=$(run warmup-gateway-batch "$GATEWAY_PORT" 200 batch.lua "$WARMUP" BATCH="$BATCH" COUNTERS="$BATCH_COUNTERS")
BATCH_ACKED=$((BATCH_ACKED + $(figure "$f" acked))); BATCH_RUNS=$((BATCH_RUNS + 1))

echo "T1 ($DURATION each) ..." >&2
f=$(run t1-plain "$PLAIN_PORT" 204 increment.lua "$DURATION"); record "T1 plain 204 server" "$f" 1 204
T1_PLAIN=$(figure "$f" rps)
f=$(run t1-gateway "$GATEWAY_PORT" 200 increment.lua "$DURATION"); record "T1 gateway, ack=commit" "$f" 1 200
T1_GATEWAY=$(figure "$f" rps)
HOT_ACKED=$((HOT_ACKED + $(figure "$f" acked))); HOT_RUNS=$((HOT_RUNS + 1))

echo "T2 ($DURATION each, $BATCH increments/request over $BATCH_COUNTERS counters) ..." >&2
f=$(run t2-plain "$PLAIN_PORT" 204 batch.lua "$DURATION" BATCH="$BATCH" COUNTERS="$BATCH_COUNTERS")
record "T2 plain 204 server, $BATCH/request" "$f" "$BATCH" 204
f=$(run t2-gateway "$GATEWAY_PORT" 200 batch.lua "$DURATION" BATCH="$BATCH" COUNTERS="$BATCH_COUNTERS")
record "T2 gateway batch, $BATCH/request" "$f" "$BATCH" 200
T2_GATEWAY=$(( $(figure "$f" rps) * BATCH ))
BATCH_ACKED=$((BATCH_ACKED + $(figure "$f" acked))); BATCH_RUNS=$((BATCH_RUNS + 1))

if [ "$READERS" -gt 0 ]; then
  echo "T5 ($DURATION: T1 writers plus $READERS readers) ..." >&2
  wrk -t1 -c"$READERS" -d"$DURATION" --latency -s "$WRK_DIR/read.lua" "http://127.0.0.1:$GATEWAY_PORT" >"$OUT/t5-reads.txt" 2>&1 &
  READS_PID=$!
  f=$(run t5-gateway-writes "$GATEWAY_PORT" 200 increment.lua "$DURATION")
  wait "$READS_PID"
  record "T5 gateway writes during reads" "$f" 1 200
  record "T5 gateway reads of the hot counter" "$OUT/t5-reads.txt" 1 200
  HOT_ACKED=$((HOT_ACKED + $(figure "$f" acked))); HOT_RUNS=$((HOT_RUNS + 1))
  T5_READS=$(figure "$OUT/t5-reads.txt" rps); T5_P99=$(figure "$OUT/t5-reads.txt" p99)
fi

echo "stopping the gateway (it flushes what is pending) ..." >&2
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true
HOT_SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='pageviews' AND record_id='hot'")
BATCH_SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='downloads'")
BATCH_INCREMENTS=$((BATCH_ACKED * BATCH))
# wrk stops with up to CONNECTIONS requests in flight per run: they may have been committed without being counted
HOT_MAX=$((HOT_ACKED + HOT_RUNS * CONNECTIONS)); BATCH_MAX=$((BATCH_INCREMENTS + BATCH_RUNS * CONNECTIONS * BATCH))
check() { if [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then echo ok; else echo MISMATCH; fi; }
HOT_CHECK=$(check "$HOT_SUM" "$HOT_ACKED" "$HOT_MAX"); BATCH_CHECK=$(check "$BATCH_SUM" "$BATCH_INCREMENTS" "$BATCH_MAX")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
meets() { awk -v a="$1" -v b="$2" 'BEGIN {print (a >= b ? "yes" : "**no**")}'; }
cat <<REPORT
### wrk: gateway ($DB, ack=commit) next to the plain Vert.x 204 server

- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, wrk -t$THREADS -c$CONNECTIONS -d$DURATION (after $WARMUP warm-up per server), database: $(sql "SELECT version()" | head -1)
- command: \`DB=$DB DURATION=$DURATION CONNECTIONS=$CONNECTIONS BATCH=$BATCH READERS=$READERS $0\`

| run | requests/s | increments/s | p50 ms | p99 ms | acknowledged | other statuses |
|---|---:|---:|---:|---:|---:|---:|
$(printf '%s\n' "${ROWS[@]}")

| target | measured | asked | met |
|---|---|---|---|
| T1 gateway / plain 204 | $(group "$T1_GATEWAY") / $(group "$T1_PLAIN") = $(ratio "$T1_GATEWAY" "$T1_PLAIN") x | >= 0.75 x | $(meets "$(ratio "$T1_GATEWAY" "$T1_PLAIN")" 0.75) |
| T2 gateway batch | $(group "$T2_GATEWAY") increments/s | >= 1,000,000 | $(meets "$T2_GATEWAY" 1000000) |
$( [ "$READERS" -gt 0 ] && echo "| T5 reads during T1 | $(group "$T5_READS") reads/s, p99 $T5_P99 ms | >= 20,000/s, p99 <= 10 ms | $(awk -v r="$T5_READS" -v p="$T5_P99" 'BEGIN {print (r >= 20000 && p <= 10 ? "yes" : "**no**")}') |")

Correctness after the gateway stopped: hot counter $HOT_SUM in the table, $HOT_ACKED acknowledged (+ at most $((HOT_MAX - HOT_ACKED)) in flight): $HOT_CHECK;
batch counters $BATCH_SUM in the table, $BATCH_INCREMENTS acknowledged (+ at most $((BATCH_MAX - BATCH_INCREMENTS)) in flight): $BATCH_CHECK.
Raw wrk outputs and logs: $OUT
REPORT
[ "$HOT_CHECK" = ok ] && [ "$BATCH_CHECK" = ok ]
