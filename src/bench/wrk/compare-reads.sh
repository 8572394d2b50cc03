#!/usr/bin/env bash
# Reads under commit load, two builds side by side in alternating rounds (A B, B A, …): GETs of one hot counter, then
# multi-gets of 100 ids, each while a second wrk drives ack=commit increments of the hot counter. Both wrk run without
# a Lua response callback (its cost would hide the server's); non-2xx counted from wrk's summaries, and the SUM of each
# build's table checked against the increments it acknowledged.
#
#   src/bench/wrk/compare-reads.sh BEFORE.jar AFTER.jar [CONFIG.yaml]
#   DB=mysql src/bench/wrk/compare-reads.sh BEFORE.jar AFTER.jar
#   PROFILE=1 …   # also a JFR recording of each measured hot-read run, its hottest frames in $OUT/*-frames.txt
#
# Environment: DB=postgres|mysql ROUNDS=3 ROUND_FROM=1 (the first round's number: an even one starts with the build
#              after, so rounds run one call each, the lock released between them, still alternate) DURATION=10s WARMUP=3s READERS=64 WRITERS=64 MULTI_READERS=16 IDS=100
#              PORT=18095 OUT=/tmp/counter-gateway-reads WORKLOADS="hot multi" GATEWAY_JVM=@conf/jvm.options
set -euo pipefail
cd "$(dirname "$0")/../../.."
BEFORE=${1:?the jar of the build before}; AFTER=${2:?the jar of the build after}
DB=${DB:-postgres}; CONFIG=${3:-conf/$DB.yaml}
ROUNDS=${ROUNDS:-3}; ROUND_FROM=${ROUND_FROM:-1}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-3s}; READERS=${READERS:-64}; WRITERS=${WRITERS:-64}
MULTI_READERS=${MULTI_READERS:-16}; IDS=${IDS:-100}; WORKLOADS=${WORKLOADS:-hot multi}
PORT=${PORT:-18095}; OUT=${OUT:-/tmp/counter-gateway-reads}; GATEWAY_JVM=${GATEWAY_JVM:-@conf/jvm.options}
JAR=$AFTER; BENCH_JAR=$AFTER  # common.sh checks both; nothing here needs the benchmark jar
WRK_DIR=src/bench/wrk
G="http://127.0.0.1:$PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"

for build in before after; do drop_gateway_tables "reads_$build"; done
GATEWAY_PID=
cleanup() { [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true; }
trap cleanup EXIT
stop() { kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=; }

MULTI_PATH="/v1/counters/downloads?$(seq 0 $((IDS - 1)) | sed 's/^/id=m/' | paste -sd'&')"
SEED=$(seq 0 $((IDS - 1)) | sed 's/.*/{"type":"downloads","id":"m&","delta":1}/' | paste -sd,)
reads_url() { case $1 in hot) echo "$G/v1/counters/downloads/hot" ;; multi) echo "$G$MULTI_PATH" ;; esac; }
p50() { awk '$1=="50%" {print $2}' "$OUT/$1.txt"; }
readers() { case $1 in hot) echo "$READERS" ;; multi) echo "$MULTI_READERS" ;; esac; }

# load BUILD WORKLOAD ROUND SECONDS: commits from one wrk and reads from another, at the same time
load() {
  local secs=${4%s}
  wrk -t1 -c"$WRITERS" -d"$((secs + 2))s" --latency -s "$WRK_DIR/post.lua" "$G/v1/counters/downloads/hot/increments" \
    >"$OUT/$1-$2-writes-$3.txt" 2>&1 &
  local writes=$!
  sleep 1
  # the CPU each side used while the reads ran (clock ticks): the gateway, the database, both wrk, the machine
  local shell=$BASHPID db m0 m1 g0 d0 r0 w0
  db=$(database_pids)
  read -r -a m0 <<<"$(machine_ticks)"
  g0=$(cpu_ticks "$GATEWAY_PID"); d0=$(cpu_ticks $db); r0=$(waited_ticks "$shell"); w0=$(cpu_ticks "$writes")
  wrk -t1 -c"$(readers "$2")" -d"$4" --latency "$(reads_url "$2")" >"$OUT/$1-$2-reads-$3.txt" 2>&1
  read -r -a m1 <<<"$(machine_ticks)"
  echo "$(($(cpu_ticks "$GATEWAY_PID") - g0)) $(($(cpu_ticks $db) - d0)) $(($(waited_ticks "$shell") - r0))" \
    "$(($(cpu_ticks "$writes") - w0)) $((m1[0] - m0[0])) $((m1[1] - m0[1]))" >"$OUT/$1-$2-cpu-$3.txt"
  wait "$writes"
}
# cpu BUILD WORKLOAD ROUND: the gateway's CPU µs per read, then the cores the gateway / database / both wrk used and
# the machine's busy share while the reads ran (the gateway's CPU includes the commit load's)
cpu() {
  local f="$OUT/$1-$2-cpu-$3.txt"
  [ -f "$f" ] || { echo "?"; return; }
  awk -v hz="$(getconf CLK_TCK)" -v cores="$(nproc)" -v n="$(requests "$1-$2-reads-$3")" '{
    secs = $6 / hz / cores
    printf "%.0f µs; %.2f / %.2f / %.2f cores; busy %.0f %%", $1 / hz * 1e6 / n, $1 / hz / secs, $2 / hz / secs,
      ($3 + $4) / hz / secs, 100 * $5 / $6 }' "$f"
}

# wrk counts the answers it read; when a run ends, up to one request per connection has been sent without its answer
# read: the SUM lies in [acknowledged, acknowledged + runs × writers]
declare -A ACKED=([before]=0 [after]=0)
RUNS=0
for round in $(seq "$ROUND_FROM" $((ROUND_FROM + ROUNDS - 1))); do
  order="before after"; [ $((round % 2)) -eq 0 ] && order="after before"
  for build in $order; do
    jar=$BEFORE; [ "$build" = after ] && jar=$AFTER
    echo "round $round, $build: load $(awk '{print $1, $2, $3}' /proc/loadavg)" | tee -a "$OUT/loads.txt" >&2
    start_gateway "$build-$round" "$jar" "$CONFIG" CG_DATABASE_TABLE="reads_$build" CG_JOURNAL_DIR="$OUT/journal-$build"
    if [ "$round" = "$ROUND_FROM" ]; then
      curl -s -o /dev/null -H 'Content-Type: application/json' -d "[$SEED]" "$G/v1/increments"
      ACKED[$build]=$((ACKED[$build] + IDS))
    fi
    for workload in $WORKLOADS; do
      load "$build" "$workload" warmup "$WARMUP"
      w="$build-$workload-writes-warmup"; ACKED[$build]=$((ACKED[$build] + $(requests "$w") - $(non2xx "$w")))
      if [ "${PROFILE:-0}" = 1 ] && [ "$workload" = hot ]; then
        jcmd "$GATEWAY_PID" JFR.start name=reads settings=profile jdk.ExecutionSample#period=1ms filename="$OUT/$build-$round.jfr" >/dev/null
      fi
      load "$build" "$workload" "$round" "$DURATION"
      if [ "${PROFILE:-0}" = 1 ] && [ "$workload" = hot ]; then
        jcmd "$GATEWAY_PID" JFR.stop name=reads >/dev/null
      fi
      w="$build-$workload-writes-$round"; ACKED[$build]=$((ACKED[$build] + $(requests "$w") - $(non2xx "$w")))
      [ "$build" = before ] && RUNS=$((RUNS + 2))
    done
    stop
  done
done

echo
echo "| workload | round | before reads/s (p50 / p99) | after reads/s (p50 / p99) | after / before | commits/s during reads, before / after | non-2xx before / after | gateway CPU per read; gateway / database / wrk cores; machine busy, before | the same, after |"
echo "|---|---|---:|---:|---:|---|---:|---|---|"
for workload in $WORKLOADS; do
  for round in $(seq "$ROUND_FROM" $((ROUND_FROM + ROUNDS - 1))); do
    b="before-$workload-reads-$round"; a="after-$workload-reads-$round"
    printf '| %s | %s | %s (%s / %s) | %s (%s / %s) | %s | %s / %s | %s / %s | %s | %s |\n' "$workload" "$round" \
      "$(rps "$b")" "$(p50 "$b")" "$(p99 "$b")" "$(rps "$a")" "$(p50 "$a")" "$(p99 "$a")" \
      "$(awk -v a="$(rps "$a")" -v b="$(rps "$b")" 'BEGIN {printf "%.2f", a / b}')" \
      "$(rps "before-$workload-writes-$round")" "$(rps "after-$workload-writes-$round")" \
      "$(($(non2xx "$b") + $(non2xx "before-$workload-writes-$round")))" \
      "$(($(non2xx "$a") + $(non2xx "after-$workload-writes-$round")))" \
      "$(cpu before "$workload" "$round")" "$(cpu after "$workload" "$round")"
  done
done
echo
STATUS=0
for build in before after; do
  sum=$(sql "SELECT COALESCE(SUM(count), 0) FROM reads_$build")
  unanswered=$((sum - ACKED[$build]))
  if [ "$unanswered" -ge 0 ] && [ "$unanswered" -le $((RUNS * WRITERS)) ]; then
    echo "$build: acknowledged ${ACKED[$build]}, SUM in reads_$build $sum: $unanswered more, OK (at most $((RUNS * WRITERS)) sent unanswered)"
  else
    echo "$build: acknowledged ${ACKED[$build]}, SUM in reads_$build $sum: MISMATCH (expected 0 to $((RUNS * WRITERS)) more)"
    STATUS=1
  fi
done
exit $STATUS
