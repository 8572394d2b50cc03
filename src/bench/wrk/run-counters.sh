#!/usr/bin/env bash
# T4 of src/DESIGN.md §7: one increment per request, ack=commit, spread uniformly over COUNTERS distinct counters
# (10,000,000 by default), next to the same load on one hot counter, in alternating rounds against one gateway, with
# the gateway's peak RSS (VmHWM), the database's CPU per million increments, the database alone for the same flush
# statement, and the SUM check: every acknowledged increment is in the table, none twice.
#
#   src/bench/wrk/run-counters.sh              # PostgreSQL 127.0.0.1:5432, database test
#   DB=mysql src/bench/wrk/run-counters.sh     # MySQL/MariaDB 127.0.0.1:3306
#
# Environment: DB=postgres|mysql ROUNDS=2 DURATION=20s WARMUP=5s THREADS=2 CONNECTIONS=64 COUNTERS=10000000
#              SEED=1 (before the rounds the table is given one row per counter, so the upserts search an index of
#              COUNTERS counters as a table holding them would; SEED=0 starts from an empty table)
#              PORT=18095 GATEWAY_JVM="@conf/jvm.options" (the JVM options the gateway runs with)
#              OUT=/tmp/counter-gateway-counters
# wrk runs increment.lua on both sides (its request() callback picks the counter), so wrk's own cost is the same.
set -euo pipefail
cd "$(dirname "$0")/../../.."
JAR=${JAR:-target/counter-gateway.jar}; BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
DB=${DB:-postgres}; ROUNDS=${ROUNDS:-2}; DURATION=${DURATION:-20s}; WARMUP=${WARMUP:-5s}; THREADS=${THREADS:-2}
C=${CONNECTIONS:-64}; COUNTERS=${COUNTERS:-10000000}; SEED=${SEED:-1}; PORT=${PORT:-18095}
GATEWAY_JVM=${GATEWAY_JVM:-@conf/jvm.options}; OUT=${OUT:-/tmp/counter-gateway-counters}
TABLE=bench_counters; WRK_DIR=src/bench/wrk; G="http://127.0.0.1:$PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
# shellcheck source=database-alone.sh
. "$WRK_DIR/database-alone.sh"
drop_gateway_tables "$TABLE"

GATEWAY_PID=
trap '[ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true' EXIT
rm -rf "$OUT/journal"
start_gateway gateway "$JAR" "conf/$DB.yaml" CG_DATABASE_TABLE=$TABLE CG_JOURNAL_DIR="$OUT/journal"

if [ "$SEED" = 1 ]; then
  echo "seeding $COUNTERS counters (one row each) ..." >&2
  case "$DB" in
    postgres) sql "INSERT INTO $TABLE (record_type, record_id, slot, count)
                   SELECT 'downloads', 't4-' || g, 0, 0 FROM generate_series(1, $COUNTERS) g ON CONFLICT DO NOTHING"
              sql "VACUUM ANALYZE $TABLE" ;;  # a statement of its own: VACUUM cannot run in the INSERT's transaction
    mysql) # MariaDB's sequence engine (seq_1_to_N tables), a million rows per statement
           for from in $(seq 1 1000000 "$COUNTERS"); do
             sql "INSERT IGNORE INTO $TABLE (record_type, record_id, slot, count)
                  SELECT 'downloads', CONCAT('t4-', seq), 0, 0 FROM seq_${from}_to_$((from + 999999 < COUNTERS ? from + 999999 : COUNTERS))"
           done ;;
  esac
fi

# the database server's CPU seconds so far (every process of it: shared with whatever else uses it, so indicative)
# (a backend that ends between listing and reading adds 0, see cpu_ticks)
# shellcheck disable=SC2046 # the database's processes, one argument each
db_cpu() { awk -v t="$(cpu_ticks $(database_pids))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'; }
# run NAME COUNTERS DURATION: wrk's summary and increment.lua's "acknowledged N" in $OUT/NAME.txt, the database's CPU
# seconds during it in $OUT/NAME.cpu and the gateway's peak RSS so far in $OUT/NAME.rss
run() { local name=$1 counters=$2 d=$3 before
  before=$(db_cpu)
  COUNTERS=$counters TARGET_PATH=/v1/counters/downloads/t4 wrk -t"$THREADS" -c"$C" -d"$d" --latency \
    -s "$WRK_DIR/increment.lua" "$G" >"$OUT/$name.txt" 2>&1
  awk -v a="$(db_cpu)" -v b="$before" 'BEGIN {printf "%.2f", a - b}' >"$OUT/$name.cpu"
  peak_rss "$GATEWAY_PID" >"$OUT/$name.rss"; }
acked() { awk '/^acknowledged/ {print $2}' "$OUT/$1.txt"; }
ACKED=0; RUNS=0
counted() { ACKED=$((ACKED + $(acked "$1"))); RUNS=$((RUNS + 1)); }

echo "warming up ($WARMUP each) ..." >&2
run warm-one 1 "$WARMUP"; counted warm-one; run warm-many "$COUNTERS" "$WARMUP"; counted warm-many
declare -A LOAD
for round in $(seq 1 "$ROUNDS"); do
  LOAD[$round]=$(awk '{print $1}' /proc/loadavg)
  echo "round $round: load average ${LOAD[$round]} before it" >&2
  if [ $((round % 2)) = 1 ]; then order="one many"; else order="many one"; fi
  for side in $order; do
    run "$side-$round" "$([ "$side" = one ] && echo 1 || echo "$COUNTERS")" "$DURATION"; counted "$side-$round"
  done
done
PEAK=$(peak_rss "$GATEWAY_PID")
grep -E '^(VmHWM|VmRSS)' "/proc/$GATEWAY_PID/status" >"$OUT/gateway-status.txt" 2>/dev/null || true
echo "stopping the gateway (SIGTERM flushes what is pending) ..." >&2
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=
SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='downloads'")
ROWS=$(sql "SELECT COUNT(*) FROM $TABLE WHERE record_type='downloads'")
# wrk stops with up to its connections in flight: those may be counted without being seen as answered
MAX=$((ACKED + RUNS * C))
if [ "$SUM" -ge "$ACKED" ] && [ "$SUM" -le "$MAX" ]; then CHECK=ok; else CHECK=MISMATCH; fi
FLUSHERS=${FLUSHERS:-$(nproc)}
read -r DBA DBA_P99 <<<"$(database_alone db-alone-one-row 1 "$FLUSHERS" "${DURATION%s}")"

rps() { awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$OUT/$1.txt"; }
p99ms() { p99_ms "$OUT/$1.txt"; }
cpu_per_million() { awk -v c="$(cat "$OUT/$1.cpu")" -v n="$(acked "$1")" 'BEGIN {if (n > 0) printf "%.1f", c * 1000000 / n; else printf "?"}'; }
row() { echo "| $1 | $2 | $(rps "$2-$1") | $(awk -v a="$(rps "many-$1")" -v b="$(rps "one-$1")" 'BEGIN {printf "%.2f", a / b}') | $(p99ms "$2-$1") | $(cat "$OUT/$2-$1.rss") | $(cpu_per_million "$2-$1") |"; }
cat <<REPORT
### T4: $COUNTERS counters next to one hot counter ($DB)

- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, wrk -t$THREADS -c$C, $DURATION per run, $ROUNDS alternating rounds, increment.lua on both sides;
  ack=commit; 1-minute load average before each round: $(for r in $(seq 1 "$ROUNDS"); do printf '%s ' "${LOAD[$r]}"; done)
- the table held $ROWS counter rows at the end$( [ "$SEED" = 1 ] && echo " (seeded with one row per counter)"); gateway JVM options: \`$GATEWAY_JVM\`
- command: \`DB=$DB ROUNDS=$ROUNDS DURATION=$DURATION COUNTERS=$COUNTERS $0\`

| round | counters | requests/s | $COUNTERS ÷ 1 counter (same round) | p99 ms | gateway peak RSS MiB so far | database CPU s per million increments |
|---|---|---:|---:|---:|---:|---:|
$(for r in $(seq 1 "$ROUNDS"); do row "$r" one; row "$r" many; done | sed -e 's/| one |/| 1 |/' -e "s/| many |/| $COUNTERS |/")

Gateway peak RSS (VmHWM) over the whole run: $PEAK MiB. The database alone (pgbench, the gateway's flush statement of
one row, prepared, $FLUSHERS connections): $DBA statements/s, p99 $DBA_P99 ms.

Correctness after SIGTERM: $SUM in the table for $ACKED acknowledged (+ at most $((MAX - ACKED)) in flight when wrk stopped): $CHECK.
Raw outputs: $OUT
REPORT
[ "$CHECK" = ok ]
