#!/usr/bin/env bash
# Cost as the work grows (issue 24): one hot counter at ack=commit from 1, 2 and 3 replicas of the gateway over one
# database, and the client's batch size (1, 10, 100 increments per request of POST /v1/increments over BATCH_COUNTERS
# counters) on one replica; in alternating rounds, with wrk and no Lua response callback. For every run: increments/s,
# p99, the replicas' flushes and increments per flush, their peak RSS, and the CPU seconds per million increments of the
# gateways and of the database (from /proc); at the end the SUM check: every acknowledged increment is in the table.
#
#   src/bench/wrk/run-replicas.sh              # PostgreSQL 127.0.0.1:5432, database test
#   DB=mysql src/bench/wrk/run-replicas.sh     # MySQL/MariaDB 127.0.0.1:3306
#
# Environment: DB=postgres|mysql ROUNDS=2 DURATION=10s CONNECTIONS=64 (in all, split over the replicas: one wrk with
#              one thread per replica, two threads for one replica)
#              WARMUP=30s (after each start: three fresh JVMs on two cores compile for ~30 s, and a run measured during
#              that measures the JIT, 4–9× the CPU per increment)
#              BATCH_COUNTERS=1000 PORT=18100 (the replicas take PORT, PORT+1, PORT+2)
#              GATEWAY_JVM="@conf/jvm.options" OUT=/tmp/counter-gateway-replicas
set -euo pipefail
cd "$(dirname "$0")/../../.."
JAR=${JAR:-target/counter-gateway.jar}; BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
DB=${DB:-postgres}; ROUNDS=${ROUNDS:-2}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-30s}; C=${CONNECTIONS:-64}
BATCH_COUNTERS=${BATCH_COUNTERS:-1000}; BASE_PORT=${PORT:-18100}; GATEWAY_JVM=${GATEWAY_JVM:-@conf/jvm.options}
OUT=${OUT:-/tmp/counter-gateway-replicas}; TABLE=bench_replicas; WRK_DIR=src/bench/wrk
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
drop_gateway_tables "$TABLE"

REPLICA_PIDS=()
stop_replicas() { local pid; for pid in "${REPLICA_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${REPLICA_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done; REPLICA_PIDS=(); }
trap stop_replicas EXIT
start_replicas() { # N: N gateways on one table, each with its own port and journal
  local i; for i in $(seq 0 $(($1 - 1))); do
    rm -rf "$OUT/journal-$i"
    PORT=$((BASE_PORT + i)) start_gateway "replica-$i" "$JAR" "conf/$DB.yaml" CG_DATABASE_TABLE=$TABLE \
      CG_JOURNAL_DIR="$OUT/journal-$i"
    REPLICA_PIDS+=("$GATEWAY_PID")
  done; }
flushes() { local i total=0; for i in $(seq 0 $((${#REPLICA_PIDS[@]} - 1))); do
    total=$((total + $(flush_count "http://127.0.0.1:$((BASE_PORT + i))"))); done; echo "$total"; }
rss_sum() { local pid total=0; for pid in "${REPLICA_PIDS[@]}"; do total=$((total + $(peak_rss "$pid"))); done; echo "$total"; }

# one_run NAME PATH INCREMENTS_PER_REQUEST [BODY]: the load split over the running replicas (one wrk each), then in
# $OUT/NAME.row: increments/s, p99 ms (the worst wrk's), non-2xx, flushes, increments per flush, peak RSS of all
# replicas, gateway and database CPU s per million increments; acknowledged increments in $OUT/NAME.acked
one_run() { local name=$1 path=$2 per=$3 body=${4:-'{"delta":1}'} n=${#REPLICA_PIDS[@]} i wrks=() f0 f1 g0 d0 t0 t1
  local threads=1; [ "$n" = 1 ] && threads=2
  f0=$(flushes); g0=$(cpu_ticks "${REPLICA_PIDS[@]}"); d0=$(cpu_ticks $(database_pids)); t0=$(date +%s.%N)
  for i in $(seq 0 $((n - 1))); do
    # the connections split as evenly as they go: 64 over 3 is 22, 21, 21
    BODY=$body wrk -t"$threads" -c$(( C / n + (i < C % n ? 1 : 0) )) -d"$DURATION" --latency -s "$WRK_DIR/post.lua" \
      "http://127.0.0.1:$((BASE_PORT + i))$path" >"$OUT/$name-$i.txt" 2>&1 &
    wrks+=($!)
  done
  for i in "${wrks[@]}"; do wait "$i"; done
  t1=$(date +%s.%N); f1=$(flushes)
  local g=$(($(cpu_ticks "${REPLICA_PIDS[@]}") - g0)) d=$(($(cpu_ticks $(database_pids)) - d0)) acked=0 worst=0 bad=0
  for i in $(seq 0 $((n - 1))); do
    acked=$((acked + ($(requests "$name-$i") - $(non2xx "$name-$i")) * per)); bad=$((bad + $(non2xx "$name-$i")))
    worst=$(awk -v w="$worst" -v v="$(p99_ms "$OUT/$name-$i.txt")" 'BEGIN {printf "%.1f", (v + 0 > w + 0 ? v : w)}')
  done
  echo "$acked" >"$OUT/$name.acked"
  awk -v a="$acked" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" -v p="$worst" -v bad="$bad" \
      -v fl="$((f1 - f0))" -v rss="$(rss_sum)" -v g="$g" -v d="$d" -v hz="$(getconf CLK_TCK)" 'BEGIN {
    printf "%.0f | %s | %d | %.0f | %.0f | %d | %.1f | %.1f", a / s, p, bad, fl / s, (fl > 0 ? a / fl : 0), rss,
      g / hz * 1e6 / a, d / hz * 1e6 / a }' >"$OUT/$name.row"; }

BATCH_BODY() { awk -v n="$1" -v c="$BATCH_COUNTERS" 'BEGIN {srand(n); printf "["; for (i = 1; i <= n; i++)
  printf "%s{\"type\":\"downloads\",\"id\":\"b-%d\"}", (i > 1 ? "," : ""), int(rand() * c); printf "]"}'; }
ACKED=0; RUNS=0; CONNECTIONS_SENT=0
counted() { ACKED=$((ACKED + $(cat "$OUT/$1.acked"))); CONNECTIONS_SENT=$((CONNECTIONS_SENT + C * $2)); }
declare -A LOAD
for round in $(seq 1 "$ROUNDS"); do
  LOAD[$round]=$(awk '{print $1}' /proc/loadavg)
  echo "round $round: load average ${LOAD[$round]} before it" >&2
  order="1 2 3"; [ $((round % 2)) = 0 ] && order="3 2 1"
  for n in $order; do
    start_replicas "$n"
    DURATION=$WARMUP one_run "warm-$n-$round" /v1/counters/pageviews/hot/increments 1; counted "warm-$n-$round" 1
    one_run "replicas-$n-$round" /v1/counters/pageviews/hot/increments 1; counted "replicas-$n-$round" 1
    if [ "$n" = 1 ]; then
      for batch in 1 10 100; do
        one_run "batch-$batch-$round" /v1/increments "$batch" "$(BATCH_BODY "$batch")"; counted "batch-$batch-$round" "$batch"
      done
    fi
    stop_replicas
  done
done
SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE")
# wrk stops with up to its connections in flight: those may be counted without being seen as answered
MAX=$((ACKED + CONNECTIONS_SENT))
if [ "$SUM" -ge "$ACKED" ] && [ "$SUM" -le "$MAX" ]; then CHECK=ok; else CHECK=MISMATCH; fi
cat <<REPORT
### Cost as the work grows: replicas over one database, and the client's batch size ($DB)

- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $C connections in all, $DURATION per run, $ROUNDS alternating rounds, wrk
  without a Lua response callback; ack=commit; 1-minute load average before each round: $(for r in $(seq 1 "$ROUNDS"); do printf '%s ' "${LOAD[$r]}"; done)
- command: \`DB=$DB ROUNDS=$ROUNDS DURATION=$DURATION $0\`

| workload | round | increments/s | p99 ms | non-2xx | flushes/s (all replicas) | increments per flush | peak RSS MiB (all replicas) | gateway CPU s per million increments | database CPU s per million increments |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
$(for n in 1 2 3; do for r in $(seq 1 "$ROUNDS"); do echo "| one hot counter, $n replica(s) | $r | $(cat "$OUT/replicas-$n-$r.row") |"; done; done)
$(for b in 1 10 100; do for r in $(seq 1 "$ROUNDS"); do echo "| 1 replica, $b increment(s) per request over $BATCH_COUNTERS counters | $r | $(cat "$OUT/batch-$b-$r.row") |"; done; done)

Correctness: $SUM in the table for $ACKED acknowledged (+ at most $((MAX - ACKED)) in flight when the runs stopped): $CHECK.
Raw outputs: $OUT
REPORT
[ "$CHECK" = ok ]
