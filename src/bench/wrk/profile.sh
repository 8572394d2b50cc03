#!/usr/bin/env bash
# Where the CPU goes per request: CPU profiles (async-profiler, from its Maven artifact) of the plain Vert.x 204 server,
# the beacon, `ack=accepted` and `ack=commit` under wrk, each as a flame graph (HTML) and collapsed stacks, and one
# table of the share of HTTP parsing, routing, the bot filter and limits, metrics, JSON, the journal, the coalescer,
# the SQL client and the rest, and of each kind of thread (event loops, the journal's writer, GC, JIT), in CPU
# microseconds per request (the process's CPU during the profile, from /proc,
# divided by the requests wrk counted). The gateway runs as the README runs it (MALLOC_ARENA_MAX=2, @conf/jvm.options)
# plus the profiler's agent, loaded at start and started only for each measured run; per-client beacon limits off,
# a browser User-Agent, no Lua response callback.
#
#   src/bench/wrk/profile.sh                       # PostgreSQL on 127.0.0.1:5432
#   DB=mysql src/bench/wrk/profile.sh              # MySQL / MariaDB on 127.0.0.1:3306
#   KEEP=src/bench/results/round4-profile src/bench/wrk/profile.sh   # also keep the table and flame graphs there
#   JOURNAL=off WORKLOADS="beacon accepted" src/bench/wrk/profile.sh  # the same doors with the journal off
#   CONFIG=/tmp/counter-gateway-beacon/gateway.yaml BEACON_LIMITS=on WORKLOADS="plain site-plainviews site-pageviews" \
#     src/bench/wrk/profile.sh   # beacons from many visitors into two namespaces of that configuration (wrk/beacon.sh's)
#
# A workload site-NAMESPACE is beacons as a site's visitors send them (edge/many-clients.lua): a random client of
# 10.0.0.0/8 in X-Forwarded-For each (the configuration must trust 127.0.0.1 as a proxy), one of PAGES pages; its SUM
# is checked over the namespace's plain and windowed counts.
#
# Environment: DB=postgres|mysql JOURNAL=always|everyMs|off (journal.fsync, or journal.enabled false)
#              CONFIG=conf/$DB.yaml BEACON_LIMITS=off (on: pageviews keeps its per-client limits) PAGES=50
#              DURATION=20s WARMUP=10s THREADS=2 CONNECTIONS=64 INTERVAL=1ms (CPU time between samples)
#              WORKLOADS="plain beacon accepted commit" PORT=18110 PLAIN_PORT=18111 TABLE=profile_round4
#              GATEWAY_JVM="@conf/jvm.options" OUT=/tmp/counter-gateway-profile KEEP= (a directory for the results)
#              MAX_LOAD=0.5 (the 1-minute load average before the servers start above which the report says the
#              machine was not idle; once they run, wrk and the servers load it themselves)
#              INCLUSIVE="LABEL=FRAME;LABEL=FRAME" (more rows of inclusive shares, beside the built-in ones)
#              WAIT_IDLE=600 (with KEEP: how long to wait for the load to fall below MAX_LOAD before refusing; FORCE=1
#              keeps the results of a busy machine all the same)
# Missing jars are built with mvn -q -Pbench package -DskipTests, the agent is unpacked with mvn -q -Pprofiler validate.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}; DURATION=${DURATION:-20s}; WARMUP=${WARMUP:-10s}; THREADS=${THREADS:-2}; C=${CONNECTIONS:-64}
INTERVAL=${INTERVAL:-1ms}; WORKLOADS=${WORKLOADS:-plain beacon accepted commit}; JOURNAL=${JOURNAL:-always}
PORT=${PORT:-18110}; PLAIN_PORT=${PLAIN_PORT:-18111}; JAR=${JAR:-target/counter-gateway.jar}
BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}; GATEWAY_JVM_BASE=${GATEWAY_JVM:-@conf/jvm.options}
OUT=${OUT:-/tmp/counter-gateway-profile}; KEEP=${KEEP:-}; MAX_LOAD=${MAX_LOAD:-0.5}
TABLE=${TABLE:-profile_round4}; WRK_DIR=src/bench/wrk; CONFIG=${CONFIG:-conf/$DB.yaml}; BEACON_LIMITS=${BEACON_LIMITS:-off}
export PAGES=${PAGES:-50}
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"; P="http://127.0.0.1:$PLAIN_PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"

case "$(uname -m)" in aarch64|arm64) PLATFORM=linux-arm64 ;; *) PLATFORM=linux-x64 ;; esac
AGENT=$PWD/target/async-profiler/$PLATFORM/libasyncProfiler.so
[ -f "$AGENT" ] || mvn -q -Pprofiler validate
[ -f "$AGENT" ] || { echo "async-profiler's agent is missing: $AGENT (mvn -Pprofiler validate)" >&2; exit 2; }
# the agent loaded at start (so every method is compiled with the debug information it needs), started per run;
# DebugNonSafepoints: inlined frames attributed to their own methods
PROFILED="-agentpath:$AGENT -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"

if [ -n "$KEEP" ] && [ "${FORCE:-0}" != 1 ] && ! wait_idle "$MAX_LOAD" "${WAIT_IDLE:-600}"; then
  echo "the machine is not idle (1-minute load $(awk '{print $1}' /proc/loadavg)): nothing kept; FORCE=1 to run anyway" >&2
  exit 3
fi
IDLE_LOAD=$(awk '{print $1}' /proc/loadavg)
rm -rf "$OUT/journal"; mkdir -p "$OUT"
drop_gateway_tables "$TABLE"
GATEWAY_PID=; PLAIN_PID=
cleanup() {
  [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true
  [ -n "$PLAIN_PID" ] && kill "$PLAIN_PID" 2>/dev/null || true
}
trap cleanup EXIT

# shellcheck disable=SC2086 # PROFILED is a list of options
start_plain plain "$PLAIN_PORT" $PROFILED
LIMITS=(); [ "$BEACON_LIMITS" = on ] || LIMITS=(CG_NAMESPACES_PAGEVIEWS_BEACON_PER_CLIENT_PER_MINUTE=0
  CG_NAMESPACES_PAGEVIEWS_BEACON_IDS_PER_CLIENT_PER_HOUR=0)
GATEWAY_JVM="$GATEWAY_JVM_BASE $PROFILED" PORT=$PORT start_gateway gateway "$JAR" "$CONFIG" \
  CG_DATABASE_TABLE=$TABLE CG_JOURNAL_DIR="$OUT/journal" \
  CG_JOURNAL_ENABLED="$([ "$JOURNAL" = off ] && echo false || echo true)" \
  CG_JOURNAL_FSYNC="$([ "$JOURNAL" = off ] && echo always || echo "$JOURNAL")" "${LIMITS[@]}"

target() { # target WORKLOAD: the process to profile and wrk's arguments
  case $1 in
    plain) echo "$PLAIN_PID $P/" ;;
    beacon) echo "$GATEWAY_PID $G/v1/beacon/pageviews/hot" ;;
    accepted) echo "$GATEWAY_PID -s $WRK_DIR/post.lua $G/v1/counters/pageviews/hot/increments?ack=accepted" ;;
    commit) echo "$GATEWAY_PID -s $WRK_DIR/post.lua $G/v1/counters/pageviews/hot/increments" ;;
    site-*) echo "$GATEWAY_PID -s src/bench/edge/many-clients.lua $G" ;;
    *) echo "unknown workload $1 (plain, beacon, accepted, commit)" >&2; exit 2 ;;
  esac
}
agent() { jcmd "$1" JVMTI.agent_load "$AGENT" "\"$2\"" >>"$OUT/agent.log" 2>&1; }

ACKED=0
declare -A CPU LOAD RPS SITE_ACKED
# acked RUN: a run's 2xx answers, added to the hot counter's tally or to its site namespace's
acked() {
  local n=$(( $(requests "$1") - $(non2xx "$1") ))
  case $w in
    plain) ;;
    site-*) SITE_ACKED[${w#site-}]=$(( ${SITE_ACKED[${w#site-}]:-0} + n )) ;;
    *) ACKED=$((ACKED + n)) ;;
  esac
}
for w in $WORKLOADS; do
  read -r pid args <<<"$(target "$w")"
  export NS=${w#site-}
  # shellcheck disable=SC2086 # args is wrk's argument list
  wrk -t"$THREADS" -c"$C" -d"$WARMUP" -H "User-Agent: $UA" $args >"$OUT/$w-warmup.txt" 2>&1
  acked "$w-warmup"
  LOAD[$w]=$(awk '{print $1}' /proc/loadavg)
  echo "profiling $w for $DURATION (load ${LOAD[$w]}) ..." >&2
  agent "$pid" "start,event=cpu,interval=$INTERVAL,threads"
  ticks0=$(cpu_ticks "$pid")
  # shellcheck disable=SC2086
  wrk -t"$THREADS" -c"$C" -d"$DURATION" --latency -H "User-Agent: $UA" $args >"$OUT/$w.txt" 2>&1
  ticks1=$(cpu_ticks "$pid")
  agent "$pid" "dump,collapsed,file=$OUT/$w.collapsed"
  agent "$pid" "stop,flamegraph,title=$w,file=$OUT/$w.html"
  acked "$w"
  RPS[$w]=$(rps "$w")
  CPU[$w]=$(awk -v t=$((ticks1 - ticks0)) -v hz="$(getconf CLK_TCK)" -v n="$(requests "$w")" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
done

echo "stopping the gateway (SIGTERM flushes what is pending) ..." >&2
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=
# counted WHERE: the views in the table and in the windowed buckets (a windowed namespace counts only there)
counted() { echo $(( $(sql "SELECT COALESCE(SUM(count), 0) FROM $TABLE WHERE $1") \
  + $(sql "SELECT COALESCE(SUM(count), 0) FROM ${TABLE}_windows WHERE $1" 2>/dev/null || echo 0) )); }
SUM=$(counted "record_type = 'pageviews' AND record_id = 'hot'")
RUNS=$(( $(echo "$WORKLOADS" | wc -w) * 2 ))
VERDICT=MISMATCH; [ "$SUM" -ge "$ACKED" ] && [ "$SUM" -le $((ACKED + RUNS * C)) ] && VERDICT=ok
SITE_CHECKS=
for ns in "${!SITE_ACKED[@]}"; do
  n=$(counted "record_type = '$ns' AND record_id <> 'hot'")
  v=ok; { [ "$n" -ge "${SITE_ACKED[$ns]}" ] && [ "$n" -le $((SITE_ACKED[$ns] + 2 * C)) ]; } || { v=MISMATCH; VERDICT=MISMATCH; }
  SITE_CHECKS="$SITE_CHECKS; $ns from many visitors: $n for ${SITE_ACKED[$ns]} (+ at most $((2 * C))): $v"
done

files=(); cpus=(); extra=()
for w in $WORKLOADS; do files+=("$w=$OUT/$w.collapsed"); cpus+=(--cpu "$w=${CPU[$w]}"); done
IFS=';' read -r -a rows <<<"${INCLUSIVE:-}"
for row in "${rows[@]}"; do [ -n "$row" ] && extra+=(--inclusive "$row"); done
{
  echo "### Where the CPU goes per request ($DB, journal $JOURNAL)"
  echo
  echo "- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, wrk -t$THREADS -c$C, $DURATION profiled after $WARMUP of warm-up per workload;"
  echo "  async-profiler CPU samples every $INTERVAL of CPU time; 1-minute load average before the servers started:"
  echo "  $IDLE_LOAD; at each profile's start, with this run's own warm-up in it:$(for w in $WORKLOADS; do printf ' %s %s' "$w" "${LOAD[$w]}"; done)"
  awk -v m="$MAX_LOAD" -v l="$IDLE_LOAD" 'BEGIN {if (l + 0 > m + 0) print "- **the machine was not idle (load above " m "): shares hold, throughput and microseconds do not**"}'
  echo "- command: \`DB=$DB JOURNAL=$JOURNAL DURATION=$DURATION $0\`; requests/s while profiled:$(for w in $WORKLOADS; do printf ' %s %s' "$w" "${RPS[$w]}"; done)"
  echo "- SUM check: $SUM in the table for $ACKED acknowledged (+ at most $((RUNS * C)) in flight at wrk's stops)$SITE_CHECKS: $VERDICT"
  echo
  java -jar "$BENCH_JAR" profile-shares "${files[@]}" "${cpus[@]}" \
    --inclusive "the gateway's request handling=HotRoutes.handle" \
    --inclusive "per-request HTTP timer=HttpRouteMeters" \
    --inclusive "Micrometer's histogram buckets=io.micrometer.core.instrument.distribution" \
    --inclusive "bot filter=BeaconFilter" \
    --inclusive "User-Agent parsing=ua_parser" \
    --inclusive "per-client limits=ClientLimits" \
    --inclusive "client address=ClientAddress" \
    --inclusive "journal, every thread=io.countergateway.internal.write.journal" \
    --inclusive "journal fsync=FileChannelImpl.force" \
    --inclusive "write path=io.countergateway.internal.write.WritePath" \
    --inclusive "coalescer=io.countergateway.internal.write.Coalescer" \
    --inclusive "SQL client=io.vertx.sqlclient" "${extra[@]}"
  echo
  echo "Flame graphs: $(for w in $WORKLOADS; do printf '%s.html ' "$w"; done)(open in a browser; the collapsed stacks stay in $OUT)."
} >"$OUT/profile.md"
cat "$OUT/profile.md"
if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP"
  cp "$OUT/profile.md" "$KEEP/profile-$DB-journal-$JOURNAL.md"
  for w in $WORKLOADS; do
    # the flame graph holds the same stacks; the collapsed file (~1 MB compressed) stays in $OUT
    cp "$OUT/$w.html" "$KEEP/$DB-journal-$JOURNAL-$w.html"
  done
fi
[ "$VERDICT" = ok ]
