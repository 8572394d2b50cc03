#!/usr/bin/env bash
# Performance round 4, side by side with the plain Vert.x 204 server in alternating rounds: wrk without a Lua response
# callback, a browser User-Agent, per-client beacon limits off (wrk is one address), the gateway started as the README
# starts it (MALLOC_ARENA_MAX=2 java @conf/jvm.options -jar target/counter-gateway.jar --config …), and every gateway's
# table SUM checked against what it acknowledged before it stopped. Every row prints its ratio to the plain server of
# the same round. Sections (SECTIONS, in this order):
#
#   journal   the journal's cost: `fsync: always` / `everyMs` / journal off, for beacons, `ack=accepted` and
#             `ack=commit` at c64, a gateway per mode and round, the modes' order alternating
#   sequence  the default configuration in the sequence beacon → accepted → commit at c64, with p99 and peak RSS, and
#             what would make the commit tail worse after the other two: the flush-id table's dead rows and the
#             counters table's (pg_stat_user_tables; MariaDB: InnoDB's history list), the journal's bytes, the
#             coalescer's backlog (pending counters, waiting requests), the flush durations (the gateway's own
#             histogram), GC pauses (-Xlog:gc) and the database's CPU per request, before and after every run; then the
#             same commit run again once the journal has released its segments and the backlog is gone ("settled"),
#             and again after a VACUUM of the flush-id table (PostgreSQL), so one run says which of them it was
#   latency   `ack=commit` through the latency-injecting proxy (the bench jar's latency-proxy) at each one-way DELAY
#             (0.25ms = 0.5 ms round trip, 1ms = 2 ms; "direct" is no proxy, 0 is the proxy's own cost), for each
#             VARIANT of the gateway (batching.maxInFlight 1, 2, 4 and 16, the MySQL client's pipelining limit), at
#             c64 and c256, with p50, p99 and the ratios to the same variant on loopback
#
#   src/bench/wrk/run-round4.sh                                    # PostgreSQL 127.0.0.1:5432, every section
#   DB=mysql src/bench/wrk/run-round4.sh                           # MariaDB / MySQL 127.0.0.1:3306
#   SECTIONS=latency DELAYS="direct 0.25ms" VARIANTS="1 4" src/bench/wrk/run-round4.sh
#   KEEP=src/bench/results src/bench/wrk/run-round4.sh             # also round4-<db>.md and round4-<db>-raw.md there
#
# Environment: DB=postgres|mysql SECTIONS="journal sequence latency" ROUNDS=3 DURATION=8s WARMUP=3s THREADS=2
#              MODES="always everyMs off" (a mode may name its http.instances after an @: "always@1 off@1"; its ratio
#              is to the journal off with the same instances) JOURNAL_WORKLOADS="beacon accepted commit" SETTLE=60 (longest wait, s, for
#              the journal and the backlog to settle) DELAYS="direct 0 0.25ms 1ms" VARIANTS="1 2 4 16" (a number is
#              batching.maxInFlight; NAME:CG_VAR=value,CG_VAR=value is any other set of overrides) CONNECTIONS="64 256"
#              PORT=18120 PLAIN_PORT=18121 PROXY_PORT=18130 (and the ports after it, one proxy per delay)
#              GATEWAY_JVM="@conf/jvm.options" PROXY_JVM="-Xms32m -Xmx64m -XX:+UseSerialGC" PROXY_THREADS=1
#              PROXY_NICE=-10 (as root; 0 otherwise: the proxy stands for the network, whose timers should not wait
#              for the gateway's and the database's CPU — each proxy prints how late its holds ended)
#              OUT=/tmp/counter-gateway-round4 KEEP= (a directory for the report and the raw outputs)
#              MAX_LOAD=0.5 (the 1-minute load average above which the report says the machine was not idle)
#              WAIT_IDLE=600 (with KEEP: how long to wait for the load to fall below MAX_LOAD before refusing; FORCE=1
#              keeps the results of a busy machine all the same)
# Missing jars are built with mvn -q -Pbench package -DskipTests. Exits 1 when a SUM check fails.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}; SECTIONS=${SECTIONS:-journal sequence latency}; ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-3s}; THREADS=${THREADS:-2}; MODES=${MODES:-always everyMs off}
JOURNAL_WORKLOADS=${JOURNAL_WORKLOADS:-beacon accepted commit}; SETTLE=${SETTLE:-60}
DELAYS=${DELAYS:-direct 0 0.25ms 1ms}; VARIANTS=${VARIANTS:-1 2 4 16}; read -r -a CONNS <<<"${CONNECTIONS:-64 256}"
PORT=${PORT:-18120}; PLAIN_PORT=${PLAIN_PORT:-18121}; PROXY_PORT=${PROXY_PORT:-18130}
JAR=${JAR:-target/counter-gateway.jar}; BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
GATEWAY_JVM_BASE=${GATEWAY_JVM:-@conf/jvm.options}; PROXY_JVM=${PROXY_JVM:--Xms32m -Xmx64m -XX:+UseSerialGC}
PROXY_THREADS=${PROXY_THREADS:-1}; PROXY_NICE=${PROXY_NICE:-$([ "$(id -u)" = 0 ] && echo -10 || echo 0)}; OUT=${OUT:-/tmp/counter-gateway-round4}; KEEP=${KEEP:-}; MAX_LOAD=${MAX_LOAD:-0.5}
WRK_DIR=src/bench/wrk; C=${CONNS[0]}; C_HIGH=${CONNS[1]:-${CONNS[0]}}
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$PORT"; P="http://127.0.0.1:$PLAIN_PORT"
# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
DB_PORT=$([ "$DB" = postgres ] && echo 5432 || echo 3306)
HZ=$(getconf CLK_TCK)

rm -rf "$OUT"/journal-* "$OUT"/*.txt "$OUT"/*.cpu "$OUT"/*.diag "$OUT"/*.metrics "$OUT"/gc-*.log
mkdir -p "$OUT"
# a journal mode: always, everyMs or off, with @N for http.instances N (none: the configuration's)
mode_fsync() { echo "${1%%@*}"; }
mode_instances() { case "$1" in *@*) echo "${1#*@}" ;; esac; }
mode_table() { local n; n=$(mode_instances "$1"); echo "r4_journal_$(mode_fsync "$1")${n:+_i$n}"; }
mode_off() { local n; n=$(mode_instances "$1"); echo "off${n:+@$n}"; }
for t in r4_sequence r4_latency; do drop_gateway_tables "$t"; done
for mode in $MODES; do drop_gateway_tables "$(mode_table "$mode")"; done

GATEWAY_PID=; PLAIN_PID=; PROXY_PIDS=()
cleanup() {
  [ -n "$GATEWAY_PID" ] && kill "$GATEWAY_PID" 2>/dev/null || true
  [ -n "$PLAIN_PID" ] && kill "$PLAIN_PID" 2>/dev/null || true
  for pid in "${PROXY_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
if [ -n "$KEEP" ] && [ "${FORCE:-0}" != 1 ] && ! wait_idle "$MAX_LOAD" "${WAIT_IDLE:-600}"; then
  echo "the machine is not idle (1-minute load $(awk '{print $1}' /proc/loadavg)): nothing kept; FORCE=1 to run anyway" >&2
  exit 3
fi
start_plain plain "$PLAIN_PORT"
load() { awk '{print $1}' /proc/loadavg; }
LOAD_START=$(load)
echo "1-minute load average at the start: $LOAD_START (idle means below $MAX_LOAD)" >&2

# --- one gateway's life: started with overrides, its acknowledged requests counted, its SUM checked at its stop ---
CHECKS=(); FAILED=0; LIFE=; LIFE_TABLE=; LIFE_SUM0=0; LIFE_ACKED=0; LIFE_SLACK=0
# a windowed namespace (pageviews in conf/postgres.yaml and conf/mysql.yaml) counts into the table's _windows twin
hot_sum() { local w="record_type = 'pageviews' AND record_id = 'hot'"
  sql "SELECT (SELECT COALESCE(SUM(count), 0) FROM $1 WHERE $w) + (SELECT COALESCE(SUM(count), 0) FROM ${1}_windows WHERE $w)" 2>/dev/null \
    || sql "SELECT COALESCE(SUM(count), 0) FROM $1 WHERE $w" 2>/dev/null || echo 0; }
# gateway_up NAME TABLE [CG_VAR=value …]: a gateway on $PORT as the README runs it, with a GC log, on TABLE
gateway_up() {
  local name=$1 table=$2
  shift 2
  LIFE=$name; LIFE_TABLE=$table; LIFE_SUM0=$(hot_sum "$table"); LIFE_ACKED=0; LIFE_SLACK=0
  # the dead rows the gateways before it left (a server with autovacuum off keeps them) would tax whichever runs
  # later in a round: each gateway starts on vacuumed tables
  if [ "$DB" = postgres ]; then
    local t; for t in "$table" "${table}_flushes" "${table}_flush_sources" "${table}_lanes" "${table}_windows"; do
      sql "VACUUM $t" >/dev/null 2>&1 || true; done
  fi
  GATEWAY_JVM="$GATEWAY_JVM_BASE -Xlog:gc:file=$OUT/gc-$name.log:uptime" start_gateway "$name" "$JAR" "conf/$DB.yaml" \
    CG_DATABASE_TABLE="$table" CG_JOURNAL_DIR="$OUT/journal-$table" \
    CG_NAMESPACES_PAGEVIEWS_BEACON_PER_CLIENT_PER_MINUTE=0 CG_NAMESPACES_PAGEVIEWS_BEACON_PER_PAGE_PER_MINUTE=0 \
    CG_NAMESPACES_PAGEVIEWS_BEACON_IDS_PER_CLIENT_PER_HOUR=0 "$@"
}
# gateway_down: SIGTERM (which flushes what is pending), then the SUM of its life against what it acknowledged
gateway_down() {
  LIFE_RSS=$(peak_rss "$GATEWAY_PID")
  kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true; GATEWAY_PID=
  local sum verdict=ok
  sum=$(( $(hot_sum "$LIFE_TABLE") - LIFE_SUM0 ))
  if [ "$sum" -lt "$LIFE_ACKED" ] || [ "$sum" -gt $((LIFE_ACKED + LIFE_SLACK)) ]; then verdict=MISMATCH; FAILED=1; fi
  CHECKS+=("$LIFE: $sum counted for $LIFE_ACKED acknowledged (+ at most $LIFE_SLACK in flight at wrk's stops): $verdict")
}
acknowledged() { # acknowledged RUN CONNECTIONS: adds a gateway run's 2xx answers to its life's tally
  LIFE_ACKED=$((LIFE_ACKED + $(requests "$1") - $(non2xx "$1"))); LIFE_SLACK=$((LIFE_SLACK + $2)); }

# --- one wrk run, with where its CPU went and what the gateway's meters and GC log say about it ---
jvm_age() { # seconds since the process started (the JVM's uptime within a few milliseconds)
  awk -v hz="$HZ" -v up="$(awk '{print $1}' /proc/uptime)" '{sub(/^.*\) /, ""); printf "%.3f", up - $20 / hz}' "/proc/$1/stat"; }
url_of() { case $1 in
    plain) echo "$P/" ;;
    beacon) echo "$G/v1/beacon/pageviews/hot" ;;
    accepted) echo "-s $WRK_DIR/post.lua $G/v1/counters/pageviews/hot/increments?ack=accepted" ;;
    commit) echo "-s $WRK_DIR/post.lua $G/v1/counters/pageviews/hot/increments" ;;
  esac; }
# run NAME WORKLOAD CONNECTIONS [DURATION]: wrk's output in $OUT/NAME.txt; $OUT/NAME.cpu: machine busy ticks, the
# server's, the database's, wrk's, the proxies', all ticks; for a gateway run also $OUT/NAME.metrics (before/after
# scrapes) and $OUT/NAME.gc (pauses in the run: count, total ms, longest ms) and $OUT/NAME.rss (peak RSS so far);
# $OUT/NAME.io: MiB the server and the database passed to write calls on files during the run
run() {
  local name=$1 workload=$2 c=$3 d=${4:-$DURATION} server=$GATEWAY_PID shell=$BASHPID m0 m1 s0 db0 w0 p0 age0 age1
  [ "$workload" = plain ] && server=$PLAIN_PID
  if [ "$workload" != plain ]; then curl -s "$G/metrics" >"$OUT/$name.before.metrics"; age0=$(jvm_age "$server"); fi
  # shellcheck disable=SC2046 # the database's processes, one argument each
  read -r -a m0 <<<"$(machine_ticks)"; s0=$(cpu_ticks "$server"); db0=$(cpu_ticks $(database_pids))
  w0=$(waited_ticks "$shell"); p0=$(cpu_ticks "${PROXY_PIDS[@]}")
  # shellcheck disable=SC2046
  local io0; io0="$(written_bytes "$server") $(written_bytes $(database_pids))"
  # shellcheck disable=SC2046 # url_of is wrk's argument list
  wrk -t"$THREADS" -c"$c" -d"$d" --latency -H "User-Agent: $UA" $(url_of "$workload") >"$OUT/$name.txt" 2>&1
  # shellcheck disable=SC2046
  read -r -a m1 <<<"$(machine_ticks)"
  echo "$((m1[0] - m0[0])) $(($(cpu_ticks "$server") - s0)) $(($(cpu_ticks $(database_pids)) - db0))" \
    "$(($(waited_ticks "$shell") - w0)) $(($(cpu_ticks "${PROXY_PIDS[@]}") - p0)) $((m1[1] - m0[1]))" >"$OUT/$name.cpu"
  # shellcheck disable=SC2046
  echo "$(written_bytes "$server") $(written_bytes $(database_pids))" | awk -v a="${io0% *}" -v b="${io0#* }" \
    '{printf "%.1f %.1f\n", ($1 - a) / 1048576, ($2 - b) / 1048576}' >"$OUT/$name.io"
  if [ "$workload" != plain ]; then
    age1=$(jvm_age "$server")
    curl -s "$G/metrics" >"$OUT/$name.after.metrics"
    awk -v from="$age0" -v to="$age1" '/Pause/ && match($0, /^\[([0-9.]+)s\]/, t) && t[1] >= from && t[1] <= to {
        n++; ms = $NF; sub(/ms$/, "", ms); sum += ms; if (ms > max) max = ms }
      END {printf "%d %.1f %.1f\n", n, sum, max}' "$OUT/gc-$LIFE.log" >"$OUT/$name.gc" 2>/dev/null || echo "? ? ?" >"$OUT/$name.gc"
    peak_rss "$GATEWAY_PID" >"$OUT/$name.rss"
    acknowledged "$name" "$c"
  fi
}
warm() { run "$1-warmup" "$2" "$3" "$WARMUP"; }

# --- what the report prints of a run ---
p99() { p99_ms "$OUT/$1.txt"; }
p50() { p50_ms "$OUT/$1.txt"; }
x_of() { awk -v a="$(rps "$1")" -v b="$(rps "$2")" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "?"}'; }
cpu_of() { # cpu_of FIELD RUN: busy (%), or CPU µs per request of server, database, wrk, proxy
  awk -v f="$1" -v n="$(requests "$2")" -v hz="$HZ" '{
    if (f == "busy") printf "%.0f", 100 * $1 / $6
    else printf "%.1f", 1e6 * (f == "server" ? $2 : f == "database" ? $3 : f == "wrk" ? $4 : $5) / hz / n }' "$OUT/$2.cpu"; }
# gauge FILE NAME: a metric's sum over its series in one scrape; delta RUN NAME: its growth during the run
gauge() { awk -v n="$2" 'index($0, n"{") == 1 || index($0, n" ") == 1 {s += $NF; f = 1} END {if (f) printf "%.0f", s; else printf "?"}' "$1"; }
gauge_max() { awk -v n="$2" 'index($0, n"{") == 1 || index($0, n" ") == 1 {if ($NF > m) m = $NF; f = 1} END {if (f) printf "%.1f", m; else printf "?"}' "$1"; }
delta() { awk -v a="$(gauge "$OUT/$1.after.metrics" "$2")" -v b="$(gauge "$OUT/$1.before.metrics" "$2")" 'BEGIN {printf "%.0f", a - b}'; }
# flush_ms RUN: the flushes of a run (from the gateway's flush-duration histogram): count, mean ms, and the bucket
# bound under which 99 % of them settled
flush_ms() {
  awk '
    FNR == 1 {file++}
    /^gateway_flush_duration_seconds_bucket\{/ { match($0, /[{,]le="([^"]+)"/, le); b[file, le[1]] += $NF; les[le[1]] = 1 }
    /^gateway_flush_duration_seconds_count/ { cnt[file] += $NF }
    /^gateway_flush_duration_seconds_sum/ { sum[file] += $NF }
    END {
      n = cnt[2] - cnt[1]; if (n <= 0) { printf "0 flushes"; exit }
      k = 0; for (l in les) if (l != "+Inf") bounds[++k] = l + 0
      asort(bounds); p99 = "> " bounds[k] * 1000
      for (i = 1; i <= k; i++) { c = 0
        for (l in les) if (l != "+Inf" && l + 0 == bounds[i]) c = b[2, l] - b[1, l]
        if (c >= 0.99 * n) { p99 = "≤ " bounds[i] * 1000; break } }
      printf "%d flushes, mean %.2f ms, p99 %s ms", n, 1000 * (sum[2] - sum[1]) / n, p99 }' \
    "$OUT/$1.before.metrics" "$OUT/$1.after.metrics"; }
gc_of() { read -r n total max <"$OUT/$1.gc"; echo "$n pauses, $total ms (longest $max ms)"; }
rss_of() { cat "$OUT/$1.rss"; }
range() { awk 'NF' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR == 0) printf "–"; else if (lo == hi) printf "%s", lo; else printf "%s–%s", lo, hi}'; }
over_rounds() { # over_rounds FUNCTION RUN-PREFIX [RUN-SUFFIX]: the function of each round's run, as a range
  for r in $(seq 1 "$ROUNDS"); do "$1" "$2-$r${3:-}"; echo; done | range; }
kilo() { awk '{printf "%.1fk\n", $1 / 1000}'; }
rps_k() { rps "$1" | kilo; }

REPORT="$OUT/report.md"; RAW="$OUT/raw.md"
{ echo "# Performance round 4 ($DB), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "- $(nproc) cores; database $(sql "SELECT version()" | head -1 | cut -c1-70); wrk -t$THREADS, $DURATION per run after"
  echo "  $WARMUP of warm-up per gateway, no Lua response callback, a browser User-Agent, per-client beacon limits off;"
  echo "  gateway: \`MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} java $GATEWAY_JVM_BASE -jar $JAR --config conf/$DB.yaml\` with the overrides named per section"
  echo "- command: \`DB=$DB SECTIONS=\"$SECTIONS\" MODES=\"$MODES\" ROUNDS=$ROUNDS WARMUP=$WARMUP DURATION=$DURATION $0\`"
  echo "- 1-minute load average at the start: $LOAD_START$(awk -v l="$LOAD_START" -v m="$MAX_LOAD" 'BEGIN {if (l + 0 > m + 0) printf " — **the machine was not idle (above %s): these figures are not to be quoted**", m}')"
  [ "$DB" = postgres ] && echo "- autovacuum: $(sql "SHOW autovacuum")"
  echo; } >"$REPORT"

# ====================================== journal ======================================
section_journal() {
  local round mode w order
  declare -gA JLOAD
  for round in $(seq 1 "$ROUNDS"); do
    order=$MODES; [ $((round % 2)) -eq 0 ] && order=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
    JLOAD[$round]=$(load); echo "journal round $round (load ${JLOAD[$round]}): plain, then $order" >&2
    run "j-plain-$round" plain "$C"
    for mode in $order; do
      local enabled=true fsync instances
      fsync=$(mode_fsync "$mode"); instances=$(mode_instances "$mode")
      [ "$fsync" = off ] && { enabled=false; fsync=always; }
      gateway_up "journal-$mode-$round" "$(mode_table "$mode")" CG_JOURNAL_ENABLED=$enabled CG_JOURNAL_FSYNC="$fsync" \
        ${instances:+CG_HTTP_INSTANCES=$instances}
      for w in $JOURNAL_WORKLOADS; do
        warm "j-$mode-$w-$round" "$w" "$C"
        run "j-$mode-$w-$round" "$w" "$C"
      done
      gateway_down
    done
  done
  { echo "## The journal's cost (c$C, a gateway per mode and round, modes alternating)"
    echo
    echo "Requests/s (× plain 204 of the same round), ranges over $ROUNDS rounds; p99 in ms; the last columns are each mode"
    echo "× journal off in the same round. Plain 204: $(over_rounds rps_k j-plain) req/s; 1-minute load at each round's start: ${JLOAD[*]}."
    echo
    printf '| path |'; for mode in $MODES; do printf ' `%s` |' "$mode"; done
    for mode in $MODES; do [ "$(mode_fsync "$mode")" = off ] || printf ' `%s` / `%s` |' "$mode" "$(mode_off "$mode")"; done; echo
    printf '|---|'; for mode in $MODES; do printf -- '---:|'; done
    for mode in $MODES; do [ "$(mode_fsync "$mode")" = off ] || printf -- '---:|'; done; echo
    for w in $JOURNAL_WORKLOADS; do
      printf '| %s |' "$w"
      for mode in $MODES; do
        printf ' %s (%s ×), p99 %s |' "$(over_rounds rps_k "j-$mode-$w")" \
          "$(for r in $(seq 1 "$ROUNDS"); do x_of "j-$mode-$w-$r" "j-plain-$r"; echo; done | range)" "$(over_rounds p99 "j-$mode-$w")"
      done
      for mode in $MODES; do
        [ "$(mode_fsync "$mode")" = off ] && continue
        printf ' %s |' "$(for r in $(seq 1 "$ROUNDS"); do x_of "j-$mode-$w-$r" "j-$(mode_off "$mode")-$w-$r"; echo; done | range)"
      done
      echo
    done
    echo
    echo "Per run: requests/s, p99 ms, gateway / database / wrk CPU µs per request, machine busy %, journal fsyncs and"
    echo "increments per fsync (the gateway's meters), GC pauses in the run:"
    echo
    echo "| run | req/s | × plain | p99 | gateway µs | database µs | wrk µs | busy % | fsyncs (increments each) | GC |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    for r in $(seq 1 "$ROUNDS"); do
      echo "| plain 204, round $r | $(rps "j-plain-$r") | 1 | $(p99 "j-plain-$r") | $(cpu_of server "j-plain-$r") | | $(cpu_of wrk "j-plain-$r") | $(cpu_of busy "j-plain-$r") | | |"
      for mode in $MODES; do for w in $JOURNAL_WORKLOADS; do
        local n="j-$mode-$w-$r" fs taken
        fs=$(delta "$n" gateway_journal_fsync_duration_seconds_count); taken=$(delta "$n" gateway_increments_taken_total)
        echo "| $w, \`$mode\`, round $r | $(rps "$n") | $(x_of "$n" "j-plain-$r") | $(p99 "$n") | $(cpu_of server "$n") | $(cpu_of database "$n") | $(cpu_of wrk "$n") | $(cpu_of busy "$n") | $fs ($(awk -v f="$fs" -v t="$taken" 'BEGIN {if (f > 0) printf "%.1f", t / f; else printf "–"}')) | $(gc_of "$n") |"
      done; done
    done
    echo; } >>"$REPORT"
}

# ====================================== sequence ======================================
# diag NAME: the state the commit tail may depend on, at this moment, into $OUT/NAME.diag (one line of key=value)
diag() {
  local t=r4_sequence line
  if [ "$DB" = postgres ]; then
    line=$(sql "SELECT 'flushes_live=' || n_live_tup || ' flushes_dead=' || n_dead_tup || ' flushes_bytes=' || pg_total_relation_size(relid)
      || ' flushes_vacuumed=' || COALESCE(to_char(GREATEST(last_vacuum, last_autovacuum), 'HH24:MI:SS'), 'never')
      FROM pg_stat_user_tables WHERE relname = '${t}_flushes'")
    line="$line $(sql "SELECT 'counters_live=' || n_live_tup || ' counters_dead=' || n_dead_tup || ' counters_bytes=' || pg_total_relation_size(relid)
      FROM pg_stat_user_tables WHERE relname = '$t'")"
    # a checkpoint (every checkpoint_timeout, or sooner once max_wal_size of WAL is written) writes every dirty page
    line="$line $(sql "SELECT 'checkpoints=' || (checkpoints_timed + checkpoints_req) || ' checkpoint_buffers=' || buffers_checkpoint FROM pg_stat_bgwriter")"
  else
    line="history_list=$(sql "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'" 2>/dev/null || echo '?')"
    line="$line flushes_rows=$(sql "SELECT COUNT(*) FROM ${t}_flushes" 2>/dev/null || echo '?')"
  fi
  if [ -n "$GATEWAY_PID" ]; then
    curl -s "$G/metrics" >"$OUT/$1.now.metrics"
    line="$line journal_bytes=$(gauge "$OUT/$1.now.metrics" gateway_journal_bytes) journal_oldest_s=$(gauge_max "$OUT/$1.now.metrics" gateway_journal_oldest_age_seconds)"
    line="$line pending=$(gauge "$OUT/$1.now.metrics" gateway_pending_counters) waiting=$(gauge "$OUT/$1.now.metrics" gateway_waiting_requests)"
  fi
  echo "$line" >"$OUT/$1.diag"
}
diag_of() { tr ' ' '\n' <"$OUT/$1.diag" | awk -F= -v k="$2" '$1 == k {v = $2} END {print (v == "" ? "–" : v)}'; }
# settle NAME: waits (at most SETTLE s) until the journal stops shrinking, nothing is pending or waiting, and the gateway
# has used less than 2 % of a core over the last second (its background work, such as making spare journal segments,
# is done); $OUT/NAME.settled: the seconds it took, the gateway's CPU ms and MiB written meanwhile
settle() {
  local start prev=-1 bytes pending waiting ticks cpu0 io0 busy
  start=$(date +%s.%N); cpu0=$(cpu_ticks "$GATEWAY_PID"); io0=$(written_bytes "$GATEWAY_PID")
  while awk -v s="$start" -v n="$(date +%s.%N)" -v m="$SETTLE" 'BEGIN {exit !(n - s < m)}'; do
    ticks=$(cpu_ticks "$GATEWAY_PID"); sleep 1; busy=$(( $(cpu_ticks "$GATEWAY_PID") - ticks ))
    curl -s "$G/metrics" >"$OUT/$1.settle.metrics"
    bytes=$(gauge "$OUT/$1.settle.metrics" gateway_journal_bytes); pending=$(gauge "$OUT/$1.settle.metrics" gateway_pending_counters)
    waiting=$(gauge "$OUT/$1.settle.metrics" gateway_waiting_requests)
    if [ "$bytes" = "$prev" ] && [ "$pending" = 0 ] && [ "$waiting" = 0 ] && [ $((busy * 50)) -lt "$HZ" ]; then break; fi
    prev=$bytes
  done
  awk -v s="$start" -v n="$(date +%s.%N)" -v c=$(( $(cpu_ticks "$GATEWAY_PID") - cpu0 )) -v hz="$HZ" \
    -v w=$(( $(written_bytes "$GATEWAY_PID") - io0 )) 'BEGIN {printf "%.0f %.0f %.1f\n", n - s, 1000 * c / hz, w / 1048576}' \
    >"$OUT/$1.settled"
}
section_sequence() {
  local round step
  declare -gA SLOAD
  STEPS="commit-first beacon accepted commit commit-settled commit-vacuumed"
  for round in $(seq 1 "$ROUNDS"); do
    SLOAD[$round]=$(load); echo "sequence round $round (load ${SLOAD[$round]})" >&2
    run "s-plain-$round" plain "$C"
    diag "s-start-$round"
    gateway_up "sequence-$round" r4_sequence
    # commit alone first, after its warm-up: the tail the later commit runs are held against
    warm "s-$round" commit "$C"
    run "s-commit-first-$round" commit "$C"; diag "s-commit-first-$round"
    for step in beacon accepted commit; do
      run "s-$step-$round" "$step" "$C"; diag "s-$step-$round"
    done
    settle "s-commit-$round"
    run "s-commit-settled-$round" commit "$C"; diag "s-commit-settled-$round"
    if [ "$DB" = postgres ]; then sql "VACUUM r4_sequence_flushes"; else sleep 1; fi
    diag "s-vacuum-$round"
    run "s-commit-vacuumed-$round" commit "$C"; diag "s-commit-vacuumed-$round"
    gateway_down
    SRSS[$round]=$LIFE_RSS
  done
  { echo "## The default configuration in sequence (c$C): beacon → accepted → commit"
    echo
    echo "A gateway per round on one table kept across rounds (as a database in use keeps it): commit alone first (after"
    echo "its warm-up), then the sequence; after its commit run, the gateway is let settle (journal bytes no longer falling, nothing"
    echo "pending or waiting, under 2 % of a core used for a second; at most ${SETTLE} s) and commit runs again, then once more after \`$( [ "$DB" = postgres ] && echo "VACUUM r4_sequence_flushes" || echo "a second's pause (InnoDB purges by itself)")\`."
    echo "Plain 204: $(over_rounds rps_k s-plain) req/s; 1-minute load at each round's start: ${SLOAD[*]}; peak RSS per round: ${SRSS[*]} MiB."
    echo
    echo "| step | req/s | × plain | p50 ms | p99 ms | flushes (gateway histogram) | GC in the run | database µs / req | gateway µs / req | MiB written to files: gateway / database |"
    echo "|---|---:|---:|---:|---:|---|---|---:|---:|---:|"
    for step in $STEPS; do for r in $(seq 1 "$ROUNDS"); do
      local n="s-$step-$r" fl="–"
      [[ "$step" == commit* ]] && fl=$(flush_ms "$n")
      echo "| $step, round $r | $(rps "$n") | $(x_of "$n" "s-plain-$r") | $(p50 "$n") | $(p99 "$n") | $fl | $(gc_of "$n") | $(cpu_of database "$n") | $(cpu_of server "$n") | $(awk '{printf "%s / %s", $1, $2}' "$OUT/$n.io") |"
    done; done
    echo
    echo "What the tail may depend on, after each step (and how long the journal and the backlog took to settle):"
    echo
    if [ "$DB" = postgres ]; then
      echo "| after | flush-id table live / dead rows (bytes) | counters table live / dead rows (bytes) | last vacuum | checkpoints so far (buffers written) | journal bytes (oldest s) | pending / waiting |"
      echo "|---|---:|---:|---|---:|---:|---:|"
    else
      echo "| after | InnoDB history list | flush-id rows | journal bytes (oldest s) | pending / waiting |"
      echo "|---|---:|---:|---:|---:|"
    fi
    for r in $(seq 1 "$ROUNDS"); do for step in start $STEPS; do
      [ "$step" = commit-vacuumed ] && [ "$DB" = postgres ] && { local n="s-vacuum-$r"; [ -f "$OUT/$n.diag" ] && echo "| VACUUM, round $r | $(diag_of "$n" flushes_live) / $(diag_of "$n" flushes_dead) ($(diag_of "$n" flushes_bytes)) | | $(diag_of "$n" flushes_vacuumed) | | | |"; }
      local n="s-$step-$r" label="$step, round $r"
      [ "$step" = commit ] && label="$label (then settled in $(awk '{printf "%s s, the gateway using %s ms of CPU and writing %s MiB meanwhile", $1, $2, $3}' "$OUT/s-commit-$r.settled"))"
      if [ "$DB" = postgres ]; then
        echo "| $label | $(diag_of "$n" flushes_live) / $(diag_of "$n" flushes_dead) ($(diag_of "$n" flushes_bytes)) | $(diag_of "$n" counters_live) / $(diag_of "$n" counters_dead) ($(diag_of "$n" counters_bytes)) | $(diag_of "$n" flushes_vacuumed) | $(diag_of "$n" checkpoints) ($(diag_of "$n" checkpoint_buffers)) | $(diag_of "$n" journal_bytes) ($(diag_of "$n" journal_oldest_s)) | $(diag_of "$n" pending) / $(diag_of "$n" waiting) |"
      else
        echo "| $label | $(diag_of "$n" history_list) | $(diag_of "$n" flushes_rows) | $(diag_of "$n" journal_bytes) ($(diag_of "$n" journal_oldest_s)) | $(diag_of "$n" pending) / $(diag_of "$n" waiting) |"
      fi
    done; done
    echo
    echo "GC logs: $OUT/gc-sequence-*.log (-Xlog:gc, uptime-stamped)."
    echo; } >>"$REPORT"
}

# ====================================== latency ======================================
variant_name() { if [[ "$1" =~ ^[0-9]+$ ]]; then echo "maxInFlight $1"; else echo "${1%%:*}"; fi; }
variant_env() { # the CG_ overrides of a variant, one per line
  if [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "CG_BATCHING_MAX_IN_FLIGHT=$1"
    # slots >= ingest verticles x (maxInFlight + 1) (src/DESIGN.md §3 slot choice)
    local slots=$(( $(nproc) * ($1 + 1) )); [ "$slots" -lt 16 ] && slots=16
    echo "CG_NAMESPACES_PAGEVIEWS_SLOTS=$slots"
  else echo "${1#*:}" | tr ',' '\n'; fi; }
variant_key() { if [[ "$1" =~ ^[0-9]+$ ]]; then echo "mif$1"; else echo "${1%%:*}"; fi; }
delay_key() { echo "$1" | tr -c 'a-zA-Z0-9\n' '_'; }
round_trip_ms() { case $1 in direct) echo 0 ;; *) awk -v d="$1" 'BEGIN {
    v = d; u = 1; if (v ~ /us$/) {sub(/us$/, "", v); u = 0.001} else if (v ~ /ms$/) {sub(/ms$/, "", v)} else if (v ~ /s$/) {sub(/s$/, "", v); u = 1000}
    printf "%g", 2 * v * u }' ;; esac; }
section_latency() {
  local i=0 d round combo combos=() order
  declare -gA PROXY_OF LLOAD
  for d in $DELAYS; do
    [ "$d" = direct ] && continue
    local port=$((PROXY_PORT + i)); i=$((i + 1))
    # shellcheck disable=SC2086 # PROXY_JVM is a list of options
    nice -n "$PROXY_NICE" java $PROXY_JVM -jar "$BENCH_JAR" latency-proxy --target "127.0.0.1:$DB_PORT" --port "$port" --delay "$d" \
      --threads "$PROXY_THREADS" >"$OUT/proxy-$(delay_key "$d").log" 2>&1 &
    PROXY_PIDS+=($!); PROXY_OF[$d]=$port
  done
  for d in $DELAYS; do [ "$d" = direct ] && continue
    for _ in $(seq 1 60); do grep -q 'latency proxy on' "$OUT/proxy-$(delay_key "$d").log" 2>/dev/null && break; sleep 0.5; done; done
  for d in $DELAYS; do for v in $VARIANTS; do combos+=("$d|$v"); done; done
  for round in $(seq 1 "$ROUNDS"); do
    LLOAD[$round]=$(load); echo "latency round $round (load ${LLOAD[$round]})" >&2
    run "l-plain-$round" plain "$C"; run "l-plain$C_HIGH-$round" plain "$C_HIGH"
    order=("${combos[@]}"); [ $((round % 2)) -eq 0 ] && order=($(printf '%s\n' "${combos[@]}" | tac))
    for combo in "${order[@]}"; do
      d=${combo%%|*}; local v=${combo#*|} key env=()
      key="l-$(delay_key "$d")-$(variant_key "$v")"
      mapfile -t env < <(variant_env "$v")
      if [ "$d" != direct ]; then env+=("CG_DATABASE_PORT=${PROXY_OF[$d]}"); fi
      gateway_up "latency-$(delay_key "$d")-$(variant_key "$v")-$round" r4_latency "${env[@]}"
      warm "$key-$round" commit "$C"
      run "$key-c$C-$round" commit "$C"
      run "$key-c$C_HIGH-$round" commit "$C_HIGH"
      gateway_down
    done
  done
  { echo "## \`ack=commit\` with the database a round trip away (latency proxy), c$C and c$C_HIGH"
    echo
    echo "Each delay is one way (the round trip adds twice it); \"direct\" is loopback without the proxy, 0 is the proxy's"
    echo "own cost. Requests/s ranges over $ROUNDS rounds (× plain 204 of the round: c$C $(over_rounds rps_k l-plain), c$C_HIGH $(over_rounds rps_k "l-plain$C_HIGH")),"
    echo "× loopback = × the same variant direct in the same round; p50 and p99 in ms. 1-minute load at each round's start: ${LLOAD[*]}."
    echo "Targets (src/DESIGN.md §7 T8): c$C_HIGH ≥ 0.8 × loopback at 0.5 ms and ≥ 0.6 × at 2 ms; c$C p50 ≤ loopback p50 + 1.5 round trips."
    echo
    echo "| round trip | variant | c$C req/s | × plain | × loopback | p50 (loopback + 1.5 RT) | p99 | c$C_HIGH req/s | × plain | × loopback | p50 | p99 |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for d in $DELAYS; do for v in $VARIANTS; do
      local k base rt
      k="l-$(delay_key "$d")-$(variant_key "$v")"; base="l-direct-$(variant_key "$v")"; rt=$(round_trip_ms "$d")
      printf '| %s | %s |' "$([ "$d" = direct ] && echo "loopback" || echo "$rt ms ($d each way)")" "$(variant_name "$v")"
      printf ' %s | %s | %s | %s (%s) | %s |' "$(over_rounds rps_k "$k-c$C")" \
        "$(for r in $(seq 1 "$ROUNDS"); do x_of "$k-c$C-$r" "l-plain-$r"; echo; done | range)" \
        "$(for r in $(seq 1 "$ROUNDS"); do x_of "$k-c$C-$r" "$base-c$C-$r"; echo; done | range)" \
        "$(over_rounds p50 "$k-c$C")" \
        "$(for r in $(seq 1 "$ROUNDS"); do awk -v b="$(p50 "$base-c$C-$r" 2>/dev/null)" -v t="$rt" 'BEGIN {if (b == "") print "?"; else printf "%.2f\n", b + 1.5 * t}'; done | range)" \
        "$(over_rounds p99 "$k-c$C")"
      printf ' %s | %s | %s | %s | %s |\n' "$(over_rounds rps_k "$k-c$C_HIGH")" \
        "$(for r in $(seq 1 "$ROUNDS"); do x_of "$k-c$C_HIGH-$r" "l-plain$C_HIGH-$r"; echo; done | range)" \
        "$(for r in $(seq 1 "$ROUNDS"); do x_of "$k-c$C_HIGH-$r" "$base-c$C_HIGH-$r"; echo; done | range)" \
        "$(over_rounds p50 "$k-c$C_HIGH")" "$(over_rounds p99 "$k-c$C_HIGH")"
    done; done
    echo
    echo "How faithful each proxy's delay was over the whole section (the proxies stopped here):"
    echo
    for pid in "${PROXY_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    PROXY_PIDS=()
    for d in $DELAYS; do [ "$d" = direct ] || echo "- $d each way: $(grep -h 'latency proxy:' "$OUT/proxy-$(delay_key "$d").log" | sed 's/^latency proxy: //')"; done
    echo
    echo "Where the CPU went (µs per request, ranges over rounds): gateway / database / proxy, and flushes per run:"
    echo
    echo "| round trip | variant | c$C gateway / database / proxy µs | c$C flushes | c$C_HIGH gateway / database / proxy µs | c$C_HIGH flushes |"
    echo "|---|---|---|---|---|---|"
    for d in $DELAYS; do for v in $VARIANTS; do
      local k; k="l-$(delay_key "$d")-$(variant_key "$v")"
      printf '| %s | %s |' "$d" "$(variant_name "$v")"
      for c in "$C" "$C_HIGH"; do
        printf ' %s / %s / %s | %s |' "$(for r in $(seq 1 "$ROUNDS"); do cpu_of server "$k-c$c-$r"; echo; done | range)" \
          "$(for r in $(seq 1 "$ROUNDS"); do cpu_of database "$k-c$c-$r"; echo; done | range)" \
          "$(for r in $(seq 1 "$ROUNDS"); do cpu_of proxy "$k-c$c-$r"; echo; done | range)" "$(flush_ms "$k-c$c-1")"
      done
      echo
    done; done
    echo; } >>"$REPORT"
}

declare -A SRSS
for s in $SECTIONS; do
  case $s in
    journal) section_journal ;;
    sequence) section_sequence ;;
    latency) section_latency ;;
    *) echo "unknown section $s (journal, sequence, latency)" >&2; exit 2 ;;
  esac
done

{ echo "## SUM checks (every gateway's table SUM after its SIGTERM against what it acknowledged)"
  echo
  for line in "${CHECKS[@]}"; do echo "- $line"; done
  echo
  echo "1-minute load average at the end: $(load). Raw wrk outputs: round4-$DB-raw.md (and $OUT)."; } >>"$REPORT"
{ echo "# Performance round 4 ($DB): raw wrk outputs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for f in $(ls -tr "$OUT"/*.txt); do echo; echo "## $(basename "$f" .txt)"; echo; echo '```'; cat "$f"; echo '```'; done; } >"$RAW"
cat "$REPORT"
if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; cp "$REPORT" "$KEEP/round4-$DB.md"; cp "$RAW" "$KEEP/round4-$DB-raw.md"; fi
[ "$FAILED" = 0 ]
