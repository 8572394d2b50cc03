#!/usr/bin/env bash
# The beacon as a site owner runs it, side by side in alternating rounds: (a) the plain Vert.x 204 server, (b) a beacon
# into a plain public namespace (one total per page), (c) a beacon into the default namespace as conf/gateway.yaml
# declares it (`pageviews`: public, counted per hour with unique visitors, so each view also counts into its companion
# namespaces and feeds two visitor sketches), each gateway run with the journal off and with each `journal.fsync` mode
# of MODES. The gateway runs as the README runs it (MALLOC_ARENA_MAX=2 java @conf/jvm.options -jar
# target/counter-gateway.jar --config …) on the machine's database, with every beacon default on (the bot filter,
# the per-client limits): each request names a random visitor of 10.0.0.0/8 in X-Forwarded-For (the gateway trusts
# 127.0.0.1 as its proxy) and one of PAGES pages (edge/many-clients.lua), so every view is a visitor the sketches have
# not seen, the way a site's visitors make them. wrk -c$CONNECTIONS, no Lua response callback, the same script for
# the plain server. After each gateway's SIGTERM, each namespace's SUM is checked against the beacons it answered
# (gateway_beacons_dropped_total must stay 0). Each run reports the gateway's CPU per request (from /proc) and, with
# the journal on, its group commit: beacons per fsync and the mean fsync over the run (the gateway's metrics).
#
#   src/bench/wrk/beacon.sh                                   # every round and the report, PostgreSQL
#   LOCK=/work/notes/bench.lock src/bench/wrk/beacon.sh       # each round under flock LOCK, released between rounds
#   src/bench/wrk/beacon.sh round 2; src/bench/wrk/beacon.sh report   # one round, then the report of those run
#
# Environment: DB=postgres|mysql ROUNDS=3 DURATION=10s WARMUP=4s THREADS=2 CONNECTIONS=64 PAGES=50
#              MODES="off always everyMs" (off: journal.enabled false; else journal.fsync) PORT=18140 PLAIN_PORT=18141
#              GATEWAY_JVM="@conf/jvm.options" OUT=/tmp/counter-gateway-beacon LOCK= (a file to flock per round)
# Missing jars are built with mvn -q -Pbench package -DskipTests. Exits 1 when a SUM check fails.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}; ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-4s}; THREADS=${THREADS:-2}
C=${CONNECTIONS:-64}; PAGES=${PAGES:-50}; MODES=${MODES:-off always everyMs}; PORT=${PORT:-18140}
PLAIN_PORT=${PLAIN_PORT:-18141}; JAR=${JAR:-target/counter-gateway.jar}
BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}; GATEWAY_JVM_BASE=${GATEWAY_JVM:-@conf/jvm.options}
OUT=${OUT:-/tmp/counter-gateway-beacon}; LOCK=${LOCK:-}
WRK_DIR=src/bench/wrk; LUA=src/bench/edge/many-clients.lua; TABLE=beacon_round5
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"; P="http://127.0.0.1:$PLAIN_PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
DB_PORT=$([ "$DB" = postgres ] && echo 5432 || echo 3306)
DB_USER=$([ "$DB" = postgres ] && echo postgres || echo root)
HZ=$(getconf CLK_TCK)
# the namespaces measured: the default one (as conf/gateway.yaml declares pageviews) and a plain public one
NAMESPACES="plainviews pageviews"

GATEWAY_PID=; PLAIN_PID=
cleanup() {
  [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true
  [ -n "$PLAIN_PID" ] && kill "$PLAIN_PID" 2>/dev/null || true
}
trap cleanup EXIT

# the configuration: conf/$DB.yaml's database, the default namespace as conf/gateway.yaml declares it, a plain one
config() {
  cat >"$OUT/gateway.yaml" <<YAML
http: { host: 127.0.0.1, port: $PORT, trustedProxies: ["127.0.0.1"] }
database: { kind: $DB, host: 127.0.0.1, port: $DB_PORT, name: test, user: $DB_USER, password: "", table: $TABLE }
journal: { dir: $OUT/journal }
namespaces:
  pageviews:  { slots: 16, public: true, unique: true, window: { bucket: hour } }
  plainviews: { slots: 16, public: true }
YAML
}
# counted RECORD_TYPE: what the tables hold for a namespace (a windowed one in its buckets, a plain one in its slots)
counted() {
  local t=$1 plain windowed
  plain=$(sql "SELECT COALESCE(SUM(count), 0) FROM $TABLE WHERE record_type = '$t'" 2>/dev/null || echo 0)
  windowed=$(sql "SELECT COALESCE(SUM(count), 0) FROM ${TABLE}_windows WHERE record_type = '$t'" 2>/dev/null || echo 0)
  echo $(( ${plain:-0} + ${windowed:-0} ))
}
dropped() { metric_sum "$G" gateway_beacons_dropped_total | sed 's/?/0/'; }
load() { awk '{print $1}' /proc/loadavg; }

# fsyncs: the journal's fsyncs so far and the seconds they took, every verticle's ("0 0" with the journal off)
fsyncs() { curl -s "$G/metrics" | awk '/^gateway_journal_fsync_duration_seconds_count/ {n += $NF}
  /^gateway_journal_fsync_duration_seconds_sum/ {s += $NF} END {printf "%.0f %.6f", n, s}'; }

# wrk NAME NAMESPACE URL DURATION: one run, its output in $OUT/NAME.txt, the server's CPU ticks in $OUT/NAME.cpu, and
# for a gateway the fsyncs made during it and their seconds in $OUT/NAME.fsync
bench() {
  local name=$1 ns=$2 url=$3 d=$4 pid=$5 t0 f0=
  t0=$(cpu_ticks "$pid")
  [ "$url" = "$G" ] && f0=$(fsyncs)
  NS=$ns PAGES=$PAGES wrk -t"$THREADS" -c"$C" -d"$d" --latency -s "$LUA" -H "User-Agent: $UA" "$url" >"$OUT/$name.txt" 2>&1
  echo $(( $(cpu_ticks "$pid") - t0 )) >"$OUT/$name.cpu"
  if [ -n "$f0" ]; then
    echo "$f0 $(fsyncs)" | awk '{printf "%d %.6f\n", $3 - $1, $4 - $2}' >"$OUT/$name.fsync"
  fi
}

round() {
  local r=$1 order mode ns nss before acked sum slack drops verdict
  config
  echo "round $r: 1-minute load $(load)" | tee "$OUT/r$r.load" >&2
  start_plain "plain-$r" "$PLAIN_PORT"
  bench "r$r-plain-warmup" x "$P" "$WARMUP" "$PLAIN_PID"
  bench "r$r-plain" x "$P" "$DURATION" "$PLAIN_PID"
  kill "$PLAIN_PID"; wait "$PLAIN_PID" 2>/dev/null || true; PLAIN_PID=
  order=$MODES; [ $((r % 2)) -eq 0 ] && order=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
  for mode in $order; do
    rm -rf "$OUT/journal"
    GATEWAY_JVM="$GATEWAY_JVM_BASE" start_gateway "gateway-$r-$mode" "$JAR" "$OUT/gateway.yaml" \
      CG_JOURNAL_ENABLED="$([ "$mode" = off ] && echo false || echo true)" \
      CG_JOURNAL_FSYNC="$([ "$mode" = off ] && echo always || echo "$mode")"
    declare -A SUM0=() ACKED=()
    for ns in $NAMESPACES; do SUM0[$ns]=$(counted "$ns"); ACKED[$ns]=0; done
    nss=$NAMESPACES; [ $((r % 2)) -eq 0 ] && nss=$(echo "$NAMESPACES" | tr ' ' '\n' | tac | tr '\n' ' ')
    # both doors warmed (compiled) before either is measured, so the first measured is not the colder
    for ns in $nss; do bench "r$r-$mode-$ns-warmup" "$ns" "$G" "$WARMUP" "$GATEWAY_PID"; done
    for ns in $nss; do
      echo "  $mode $ns: load $(load)" >>"$OUT/r$r.load"
      bench "r$r-$mode-$ns" "$ns" "$G" "$DURATION" "$GATEWAY_PID"
      for run in "r$r-$mode-$ns-warmup" "r$r-$mode-$ns"; do
        ACKED[$ns]=$(( ACKED[$ns] + $(requests "$run") - $(non2xx "$run") ))
      done
    done
    drops=$(dropped)
    kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=
    for ns in $NAMESPACES; do
      sum=$(( $(counted "$ns") - SUM0[$ns] )); slack=$((2 * C)); verdict=ok
      if [ "$sum" -lt "${ACKED[$ns]}" ] || [ "$sum" -gt $(( ACKED[$ns] + slack )) ]; then verdict=MISMATCH; fi
      echo "r$r $mode $ns: $sum counted for ${ACKED[$ns]} answered (+ at most $slack in flight at wrk's stops), $drops dropped: $verdict" \
        | tee -a "$OUT/checks.txt" >&2
    done
  done
}

report() {
  local r mode ns rounds
  rounds=$(ls "$OUT"/r*-plain.txt 2>/dev/null | sed 's/.*\/r\([0-9]*\)-plain.txt/\1/' | sort -n | tr '\n' ' ')
  rps_of() { [ -f "$OUT/$1.txt" ] && rps "$1" || echo 0; }
  us_of() { awk -v t="$(cat "$OUT/$1.cpu")" -v n="$(requests "$1")" -v hz="$HZ" 'BEGIN {printf "%.1f", 1e6 * t / hz / n}'; }
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "?"}'; }
  # beacons per fsync (the group commit) and the mean fsync, from the gateway's metrics over the measured run
  group() { [ -f "$OUT/$1.fsync" ] && awk -v n="$(requests "$1")" '$1 > 0 {printf "%.1f | %.2f", n / $1, 1000 * $2 / $1; next}
    {printf " | "}' "$OUT/$1.fsync" || printf ' | '; }
  echo "| round | load | run | req/s | × plain 204 | × plain beacon | p99 ms | gateway µs/req | beacons per fsync | fsync mean ms |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  for r in $rounds; do
    local plain; plain=$(rps_of "r$r-plain")
    echo "| $r | $(awk '{print $NF; exit}' "$OUT/r$r.load") | plain 204 | $plain | 1 | | $(p99_ms "$OUT/r$r-plain.txt") | $(us_of "r$r-plain") | | |"
    for mode in $MODES; do
      local pb; pb=$(rps_of "r$r-$mode-plainviews")
      for ns in $NAMESPACES; do
        local run="r$r-$mode-$ns" label; label=$([ "$ns" = pageviews ] && echo "default beacon" || echo "plain beacon")
        [ -f "$OUT/$run.txt" ] || continue
        echo "| $r | $(awk -v k="$mode $ns:" 'index($0, "  " k) == 1 {print $NF}' "$OUT/r$r.load") | $label, journal $mode | $(rps "$run") | $(ratio "$(rps "$run")" "$plain") | $(ratio "$(rps "$run")" "$pb") | $(p99_ms "$OUT/$run.txt") | $(us_of "$run") | $(group "$run") |"
      done
    done
  done
  echo
  echo "SUM checks:"; echo; sed 's/^/- /' "$OUT/checks.txt"
  grep -q MISMATCH "$OUT/checks.txt" && return 1 || return 0
}

case "${1:-all}" in
  round) mkdir -p "$OUT"; round "$2" ;;
  report) report ;;
  all)
    rm -rf "$OUT"; mkdir -p "$OUT"; drop_gateway_tables "$TABLE"
    for r in $(seq 1 "$ROUNDS"); do
      if [ -n "$LOCK" ]; then OUT=$OUT flock "$LOCK" "$0" round "$r"; else round "$r"; fi
    done
    report | tee "$OUT/report.md" ;;
  *) echo "usage: $0 [all | round N | report]" >&2; exit 2 ;;
esac
