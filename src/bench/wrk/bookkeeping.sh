#!/usr/bin/env bash
# What the exactly-once bookkeeping costs the database on the commit path (issue 24): ack=commit increments of one
# hot counter at 64 connections, against variants of the gateway in alternating rounds, with pg_stat_statements reset
# before each measured run and read after it. Each variant's statements are grouped: the flush upserts, the fence
# advance, the rest of the flush-source bookkeeping (register, prune, delete) and everything else. A variant with
# batching.exactlyOnce=false writes the same flushes without an id or the source's row, so the difference in the
# flush upsert's mean time is what the id insert and the shared row cost inside that one statement.
#
#   src/bench/wrk/bookkeeping.sh NAME=JAR[:VAR=value,VAR=value] …
#   e.g. src/bench/wrk/bookkeeping.sh before=old.jar after=target/counter-gateway.jar \
#          no-ids=target/counter-gateway.jar:CG_BATCHING_EXACTLY_ONCE=false
#
# Needs pg_stat_statements in shared_preload_libraries of the PostgreSQL on 127.0.0.1:5432 (a restart); the script
# creates the extension in the database test. Environment: ROUNDS=3 DURATION=10s WARMUP=3s THREADS=2 CONNECTIONS=64
# PORT=18091 OUT=/tmp/counter-gateway-bookkeeping
set -euo pipefail
cd "$(dirname "$0")/../../.."
[ $# -ge 1 ] || { sed -n 2,15p "$0" >&2; exit 2; }
DB=postgres; CONFIG=conf/postgres.yaml
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-3s}; THREADS=${THREADS:-2}; C=${CONNECTIONS:-64}
PORT=${PORT:-18091}; OUT=${OUT:-/tmp/counter-gateway-bookkeeping}
WRK_DIR=src/bench/wrk
declare -A JARS ENVS
NAMES=()
for variant in "$@"; do
  name=${variant%%=*}; rest=${variant#*=}
  NAMES+=("$name"); JARS[$name]=${rest%%:*}
  ENVS[$name]=""; [[ $rest == *:* ]] && ENVS[$name]=${rest#*:}
done
JAR=${JARS[${NAMES[0]}]}; BENCH_JAR=$JAR  # common.sh checks both; nothing here needs the benchmark jar
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
sql "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
sql "SELECT 1 FROM pg_stat_statements LIMIT 1" >/dev/null || {
  echo "pg_stat_statements is not loaded: add it to shared_preload_libraries and restart PostgreSQL" >&2; exit 2; }
for name in "${NAMES[@]}"; do drop_gateway_tables "bk_${name//-/_}"; done

GATEWAY_PID=
cleanup() { [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true; }
trap cleanup EXIT
stop() { kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=; }
run() { wrk -t"$THREADS" -c"$C" -d"$1" --latency -s "$WRK_DIR/post.lua" \
  "http://127.0.0.1:$PORT/v1/counters/downloads/hot/increments" >"$OUT/$2.txt" 2>&1; }

# the statements of one table, grouped: group | calls | total ms | mean ms
statements() {
  sql "SELECT CASE
      WHEN query LIKE 'WITH s AS (SELECT fence FROM $1_flush_sources%' OR query LIKE 'INSERT INTO $1 AS c%'
        THEN 'flush upsert'
      WHEN query LIKE 'WITH raised AS%' OR query LIKE 'UPDATE $1_flush_sources SET fence = GREATEST%'
        OR query LIKE 'DELETE FROM $1_flushes WHERE flush_id = ANY%' THEN 'fence advance'
      WHEN query ~ '^(BEGIN|COMMIT)' THEN 'BEGIN/COMMIT'
      WHEN query LIKE '%$1_flush%' THEN 'other flush bookkeeping'
      ELSE 'other' END AS grp, sum(calls), round(sum(total_exec_time)::numeric, 1),
      round((sum(total_exec_time) / greatest(sum(calls), 1))::numeric, 3)
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'test')
      AND (query LIKE '%$1%' OR query ~ '^(BEGIN|COMMIT)')
    GROUP BY 1 ORDER BY 1"
}

declare -A ACKED
for name in "${NAMES[@]}"; do ACKED[$name]=0; done
for round in $(seq 1 "$ROUNDS"); do
  # rotate which variant goes first, so none always runs on a warmer machine
  order=("${NAMES[@]:$(( (round - 1) % ${#NAMES[@]} ))}" "${NAMES[@]:0:$(( (round - 1) % ${#NAMES[@]} ))}")
  for name in "${order[@]}"; do
    table="bk_${name//-/_}"
    echo "round $round, $name: load $(awk '{print $1}' /proc/loadavg)" >&2
    IFS=',' read -r -a extra <<<"${ENVS[$name]}"
    start_gateway "$name" "${JARS[$name]}" "$CONFIG" CG_DATABASE_TABLE="$table" CG_JOURNAL_DIR="$OUT/journal-$name" \
      "${extra[@]}"
    run "$WARMUP" "$name-warmup-$round"
    sql "SELECT pg_stat_statements_reset()" >/dev/null
    run "$DURATION" "$name-$round"
    statements "$table" >"$OUT/$name-$round.statements"
    stop
    for run in "$name-warmup-$round" "$name-$round"; do
      ACKED[$name]=$((ACKED[$name] + $(requests "$run") - $(non2xx "$run")))
    done
  done
done

echo "| variant | round | req/s | p99 | flush upserts: calls, mean ms | fence advances: calls, total ms | other flush bookkeeping: calls, total ms | BEGIN/COMMIT: calls, total ms | bookkeeping statements' share of DB time |"
echo "|---|---:|---:|---:|---|---|---|---|---:|"
for name in "${NAMES[@]}"; do
  for round in $(seq 1 "$ROUNDS"); do
    f="$OUT/$name-$round.statements"
    field() { awk -F'|' -v g="$1" -v c="$2" '$1 == g {print $c}' "$f"; }
    printf '| %s | %s | %s | %s | %s, %s | %s, %s | %s, %s | %s, %s | %s |\n' "$name" "$round" "$(rps "$name-$round")" \
      "$(p99 "$name-$round")" "$(field 'flush upsert' 2)" "$(field 'flush upsert' 4)" "$(field 'fence advance' 2)" \
      "$(field 'fence advance' 3)" "$(field 'other flush bookkeeping' 2)" "$(field 'other flush bookkeeping' 3)" \
      "$(field 'BEGIN/COMMIT' 2)" "$(field 'BEGIN/COMMIT' 3)" \
      "$(awk -F'|' '{t += $3} $1 == "fence advance" || $1 == "other flush bookkeeping" {b += $3}
        END {if (t > 0) printf "%.1f %%", 100 * b / t}' "$f")"
  done
done
echo
for name in "${NAMES[@]}"; do
  table="bk_${name//-/_}"
  sum=$(sql "SELECT COALESCE(SUM(count), 0) FROM $table")
  extra=$((sum - ACKED[$name]))
  echo "$name: acknowledged ${ACKED[$name]}, SUM in $table $sum: $extra more," \
    "$([ "$extra" -ge 0 ] && [ "$extra" -le $((2 * ROUNDS * C)) ] && echo "OK (at most $((2 * ROUNDS * C)) sent unanswered)" \
      || echo "MISMATCH (expected 0 to $((2 * ROUNDS * C)) more)")"
done
