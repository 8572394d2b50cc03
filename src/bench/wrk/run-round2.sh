#!/usr/bin/env bash
# Performance round 2: every HTTP workload of the gateway next to the plain Vert.x 204 server, in alternating rounds,
# with wrk -t2 and no Lua response callback (wrk's own cost would hide the server's), then the event bus next to Redis
# INCRBY through the Vert.x client (the in-process `bench`), and a SUM check of everything acknowledged. Beside every
# figure the gateway's peak RSS so far (VmHWM); at the end its heap histogram and native memory, and the database alone
# running the gateway's own flush statement through pgbench at the gateway's flush concurrency (database-alone.sh), and
# where each run's CPU went: the machine's busy share, and CPU microseconds per request of the server, the database, wrk.
#
#   src/bench/wrk/run-round2.sh                # gateway on PostgreSQL 127.0.0.1:5432, database test
#   DB=mysql src/bench/wrk/run-round2.sh       # gateway on MySQL/MariaDB 127.0.0.1:3306
#
# Environment: DB=postgres|mysql ROUNDS=2 DURATION=10s WARMUP=5s THREADS=2 READERS=16 BATCH=100 BATCH_COUNTERS=1000
#              GATEWAY_PORT=18080 PLAIN_PORT=18081 JAR=target/counter-gateway.jar
#              BENCH_JAR=target/counter-gateway-bench.jar (plain-server and the in-process bench)
#              GATEWAY_JVM="@conf/jvm.options" (the gateway's JVM options; add -XX:NativeMemoryTracking=summary for
#              the native-memory breakdown) FLUSHERS=$(nproc) (pgbench connections of the database-alone rows)
#              OUT=/tmp/counter-gateway-round2 MAX_LOAD=1.0 (the 1-minute load average above which the machine does
#              not count as idle)
# Missing jars are built with mvn -q -Pbench package -DskipTests.
set -euo pipefail
cd "$(dirname "$0")/../../.."

DB=${DB:-postgres}; ROUNDS=${ROUNDS:-2}; DURATION=${DURATION:-10s}; WARMUP=${WARMUP:-5s}; THREADS=${THREADS:-2}
READERS=${READERS:-16}; BATCH=${BATCH:-100}; BATCH_COUNTERS=${BATCH_COUNTERS:-1000}
GATEWAY_PORT=${GATEWAY_PORT:-18080}; PLAIN_PORT=${PLAIN_PORT:-18081}; JAR=${JAR:-target/counter-gateway.jar}
BENCH_JAR=${BENCH_JAR:-target/counter-gateway-bench.jar}
OUT=${OUT:-/tmp/counter-gateway-round2}; MAX_LOAD=${MAX_LOAD:-1.0}; GATEWAY_JVM=${GATEWAY_JVM:-@conf/jvm.options}
TABLE=bench_round2; WRK_DIR=src/bench/wrk
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"
G="http://127.0.0.1:$GATEWAY_PORT"; P="http://127.0.0.1:$PLAIN_PORT"

# shellcheck source=common.sh
. "$WRK_DIR/common.sh"
# shellcheck source=database-alone.sh
. "$WRK_DIR/database-alone.sh"
drop_gateway_tables "$TABLE"

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
java -jar "$BENCH_JAR" plain-server --port "$PLAIN_PORT" >"$OUT/plain.log" 2>&1 &
PLAIN_PID=$!; PIDS+=($PLAIN_PID)
# the database's configuration plus three beacon namespaces: one without the bot filter (plain beacons), one with
# daily windows, and one with daily windows counting unique visitors (namespaces: is the file's last block, so the
# lines below extend it)
CONFIG="$OUT/gateway.yaml"
{ cat "conf/$DB.yaml"; echo "  beacons-plain: { slots: 16, public: true, beacon: { dropBots: false, perClientPerMinute: 0, perPagePerMinute: 0, idsPerClientPerHour: 0, newIdsPerHour: 0 } }"
  echo "  beacons-windowed: { slots: 16, public: true, beacon: { perClientPerMinute: 0, perPagePerMinute: 0, idsPerClientPerHour: 0, newIdsPerHour: 0 }, window: { bucket: day, retention: 2d } }"
  echo "  beacons-unique: { slots: 16, public: true, unique: true, beacon: { perClientPerMinute: 0, perPagePerMinute: 0, idsPerClientPerHour: 0, newIdsPerHour: 0 }, window: { bucket: day, retention: 2d } }"; } >"$CONFIG"
CG_NAMESPACES_PAGEVIEWS_BEACON_PER_CLIENT_PER_MINUTE=0 CG_NAMESPACES_PAGEVIEWS_BEACON_IDS_PER_CLIENT_PER_HOUR=0 \
  CG_HTTP_PORT=$GATEWAY_PORT CG_DATABASE_TABLE=$TABLE MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} java $GATEWAY_JVM -jar "$JAR" --config "$CONFIG" >"$OUT/gateway.log" 2>&1 &
GATEWAY_PID=$!; PIDS+=($GATEWAY_PID)
wait_for() { for _ in $(seq 1 120); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" || true)" = "$2" ] && return 0; sleep 0.5; done
  echo "no answer $2 from $1; see $OUT/*.log" >&2; exit 1; }
wait_for "$P/" 204; wait_for "$G/health/ready" 200

# wrk NAME CONNECTIONS DURATION URL [wrk args...]: raw output in $OUT/NAME.txt, the gateway's peak resident memory so
# far (VmHWM, MiB) in $OUT/NAME.rss, and where the CPU went during it in $OUT/NAME.cpu: the machine's busy ticks, the
# server's (the plain one or the gateway, by the URL), the database's, wrk's, and the ticks there were (see cpu_of)
bench() { local name=$1 c=$2 d=$3 url=$4; shift 4
  local server=$GATEWAY_PID; [[ "$url" == "$P"* ]] && server=$PLAIN_PID
  local machine0 server0 db0 wrk0 machine1 shell=$BASHPID
  # shellcheck disable=SC2046 # the database's processes, one argument each
  read -r -a machine0 <<<"$(machine_ticks)"; server0=$(cpu_ticks "$server"); db0=$(cpu_ticks $(database_pids)); wrk0=$(waited_ticks "$shell")
  wrk -t"$THREADS" -c"$c" -d"$d" --latency -H "User-Agent: $UA" "$@" "$url" >"$OUT/$name.txt" 2>&1
  # shellcheck disable=SC2046
  read -r -a machine1 <<<"$(machine_ticks)"
  echo "$((machine1[0] - machine0[0])) $(($(cpu_ticks "$server") - server0)) $(($(cpu_ticks $(database_pids)) - db0))" \
    "$(($(waited_ticks "$shell") - wrk0)) $((machine1[1] - machine0[1]))" >"$OUT/$name.cpu"
  peak_rss "$GATEWAY_PID" >"$OUT/$name.rss"; }
# flushed NAME COMMAND...: runs the command and writes the gateway's flushes per second during it to $OUT/NAME.flushes
flushes() { flush_count "$G"; }
flushed() { local name=$1 before after start end; shift
  before=$(flushes); start=$(date +%s.%N); "$@"; end=$(date +%s.%N); after=$(flushes)
  awk -v a="$after" -v b="$before" -v s="$start" -v e="$end" 'BEGIN {printf "%.0f", (a - b) / (e - s)}' >"$OUT/$name.flushes"; }
rps() { awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$OUT/$1.txt"; }
requests() { awk '/requests in/ {print $1}' "$OUT/$1.txt"; }
non2xx() { awk '/Non-2xx or 3xx responses:/ {n=$5} END {print n+0}' "$OUT/$1.txt"; }
p99() { p99_ms "$OUT/$1.txt"; }
idle() { awk '{print $1}' /proc/loadavg; }

HOT_ACKED=0; HOT_RUNS=0; BATCH_ACKED=0; BATCH_RUNS=0
acked() { echo $(( $(requests "$1") - $(non2xx "$1") )); }
hot() { HOT_ACKED=$((HOT_ACKED + $(acked "$1"))); HOT_RUNS=$((HOT_RUNS + 1)); }

BATCH_BODY=$(awk -v n="$BATCH" -v c="$BATCH_COUNTERS" 'BEGIN {srand(7); printf "["; for (i = 1; i <= n; i++) printf "%s{\"type\":\"downloads\",\"id\":\"b-%d\"}", (i > 1 ? "," : ""), int(rand() * c); printf "]"}')

echo "warming up ($WARMUP each) ..." >&2
bench warm-plain 64 "$WARMUP" "$P/"; bench warm-commit 64 "$WARMUP" "$G/v1/counters/pageviews/hot/increments" -s "$WRK_DIR/post.lua"; hot warm-commit
bench warm-beacon 64 "$WARMUP" "$G/v1/beacon/pageviews/hot"; hot warm-beacon

declare -A R
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round: load average $(idle) before it" >&2
  R[load,$round]=$(idle)
  bench "plain-$round" 64 "$DURATION" "$P/"
  bench "beacon-$round" 64 "$DURATION" "$G/v1/beacon/pageviews/hot"; hot "beacon-$round"
  bench "beacon-plain-$round" 64 "$DURATION" "$G/v1/beacon/beacons-plain/hot"
  bench "beacon-windowed-$round" 64 "$DURATION" "$G/v1/beacon/beacons-windowed/hot"
  bench "beacon-unique-$round" 64 "$DURATION" "$G/v1/beacon/beacons-unique/hot"
  bench "accepted-$round" 64 "$DURATION" "$G/v1/counters/pageviews/hot/increments?ack=accepted" -s "$WRK_DIR/post.lua"; hot "accepted-$round"
  flushed "commit64-$round" bench "commit64-$round" 64 "$DURATION" "$G/v1/counters/pageviews/hot/increments" -s "$WRK_DIR/post.lua"
  hot "commit64-$round"
  bench "plain256-$round" 256 "$DURATION" "$P/"
  bench "commit256-$round" 256 "$DURATION" "$G/v1/counters/pageviews/hot/increments" -s "$WRK_DIR/post.lua"; hot "commit256-$round"
  THREADS_SAVED=$THREADS; THREADS=1
  bench "reads-$round" "$READERS" "$DURATION" "$G/v1/counters/pageviews/hot" & READS=$!
  bench "mixed-writes-$round" 64 "$DURATION" "$G/v1/counters/pageviews/hot/increments" -s "$WRK_DIR/post.lua"
  wait "$READS"; THREADS=$THREADS_SAVED; hot "mixed-writes-$round"
  BODY="$BATCH_BODY" flushed "batch-$round" bench "batch-$round" 64 "$DURATION" "$G/v1/increments" -s "$WRK_DIR/post.lua"
  BATCH_ACKED=$((BATCH_ACKED + $(acked "batch-$round"))); BATCH_RUNS=$((BATCH_RUNS + 1))
done
LOAD_AFTER=$(idle)
GATEWAY_PEAK_RSS=$(peak_rss "$GATEWAY_PID")
# where the memory is at the end: the heap's classes and, when the JVM tracks it, native memory by holder
jcmd "$GATEWAY_PID" GC.class_histogram >"$OUT/class-histogram.txt" 2>&1 || true
jcmd "$GATEWAY_PID" VM.native_memory summary >"$OUT/native-memory.txt" 2>&1 || true
grep -E '^(VmHWM|VmRSS|RssAnon|RssFile|Threads)' "/proc/$GATEWAY_PID/status" >"$OUT/gateway-status.txt" 2>/dev/null || true

echo "stopping the gateway (SIGTERM flushes what is pending) ..." >&2
kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true
HOT_SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='pageviews' AND record_id='hot'")
BATCH_SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='downloads'")
# wrk stops with up to its connections in flight: those may be counted without being seen as answered
HOT_MAX=$((HOT_ACKED + HOT_RUNS * 256)); BATCH_INCR=$((BATCH_ACKED * BATCH)); BATCH_MAX=$((BATCH_INCR + BATCH_RUNS * 64 * BATCH))
check() { if [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then echo ok; else echo MISMATCH; fi; }

BEACON_PLAIN_SUM=$(sql "SELECT COALESCE(SUM(count),0) FROM $TABLE WHERE record_type='beacons-plain' AND record_id='hot'")
BEACON_PLAIN_ACKED=0; for r in $(seq 1 "$ROUNDS"); do BEACON_PLAIN_ACKED=$((BEACON_PLAIN_ACKED + $(acked "beacon-plain-$r"))); done
UNIQUE_BYTES=$(sql "SELECT COALESCE(SUM($( [ "$DB" = postgres ] && echo 'octet_length(sketch)' || echo 'LENGTH(sketch)')),0) FROM ${TABLE}_uniques" 2>/dev/null || echo "?")

# the database alone, after the gateway stopped: its own flush statement at its flush concurrency (one connection per
# ingest verticle and flush in flight), for the hot counter's one-row flush and the batch workload's flush (its
# counters, at most batching.maxKeys of them)
FLUSHERS=${FLUSHERS:-$(nproc)}; FLUSH_ROWS=$(( BATCH_COUNTERS < 1000 ? BATCH_COUNTERS : 1000 ))
read -r DBA_HOT DBA_HOT_P99 <<<"$(database_alone db-alone-hot 1 "$FLUSHERS" "${DURATION%s}")"
read -r DBA_BATCH DBA_BATCH_P99 <<<"$(database_alone db-alone-batch "$FLUSH_ROWS" "$FLUSHERS" "${DURATION%s}")"
share() { # workload statements/s: the gateway's flushes/s per round as a share of what the database alone did
  for r in $(seq 1 "$ROUNDS"); do awk -v a="$(flush_rate "$1-$r")" -v b="$2" 'BEGIN {if (b + 0 > 0) printf "%.2f ", a / b; else printf "? "}'; done; }
per_flush() { # workload increments-per-request: increments each of the gateway's flushes carried, per round
  for r in $(seq 1 "$ROUNDS"); do awk -v n="$(rps "$1-$r")" -v f="$(flush_rate "$1-$r")" -v k="$2" 'BEGIN {if (f > 0) printf "%.0f ", n * k / f; else printf "? "}'; done; }

# event bus at 64 senders (as in the issue) and at 512 (where neither side waits on its round trip), alternating
for round in $(seq 1 "$ROUNDS"); do
  for c in 64 512; do
    echo "event bus next to Redis INCRBY, $c senders (in-process bench, $DURATION) ..." >&2
    java -jar "$BENCH_JAR" --db "$DB" --concurrency "$c" --duration "$DURATION" --counters 1 \
      --strategies gateway-bus,redis >"$OUT/bus-$c-$round.md" 2>"$OUT/bus-$c-$round.log" || true
  done
done
busrows() { grep -E '^\| #' "$OUT/bus-$1-1.md" | head -1; echo '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|'
  for r in $(seq 1 "$ROUNDS"); do grep -E '^\| [0-9]+ \| (gateway, event bus|Redis INCRBY)' "$OUT/bus-$1-$r.md"; done; }

span() { # workload: "min-max" over the rounds of its requests/s
  local vals=(); for r in $(seq 1 "$ROUNDS"); do vals+=("$(rps "$1-$r")"); done
  printf '%s\n' "${vals[@]}" | sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%d–%d", lo, hi}'; }
ratio() { # workload baseline: "min-max" of the per-round ratios
  for r in $(seq 1 "$ROUNDS"); do awk -v a="$(rps "$1-$r")" -v b="$(rps "$2-$r")" 'BEGIN {printf "%.2f\n", a / b}'; done |
    sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%s–%s", lo, hi}'; }
rss_of() { cat "$OUT/$1.rss"; }
# cpu_of FIELD RUN: from $OUT/RUN.cpu, "busy" (the machine's busy share of its cores, %) or the CPU microseconds per
# request of "server", "database" or "wrk"
cpu_of() { awk -v f="$1" -v n="$(requests "$2")" -v hz="$(getconf CLK_TCK)" '{
    if (f == "busy") printf "%.0f", 100 * $1 / $5
    else printf "%.1f", 1e6 * (f == "server" ? $2 : f == "database" ? $3 : $4) / hz / n }' "$OUT/$2.cpu"; }
cpu_row() { # label run-prefix: a row of the CPU table, values per round
  local label=$1 run=$2 field r; printf '| %s |' "$label"
  for field in busy server database wrk; do printf ' '; for r in $(seq 1 "$ROUNDS"); do printf '%s ' "$(cpu_of "$field" "$run-$r")"; done; printf '|'; done
  echo; }
flush_rate() { cat "$OUT/$1.flushes"; }
col() { for r in $(seq 1 "$ROUNDS"); do printf '%s ' "$($1 "$2-$r")"; done; }
cat <<REPORT
### Round 2: the gateway ($DB) next to the plain Vert.x 204 server

- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, wrk -t$THREADS, $DURATION per run, $ROUNDS alternating rounds, no Lua response callback;
  database $(sql "SELECT version()" | head -1 | cut -c1-60); 1-minute load average before each round: $(for r in $(seq 1 "$ROUNDS"); do printf '%s ' "${R[load,$r]}"; done)(after: $LOAD_AFTER)
- command: \`DB=$DB ROUNDS=$ROUNDS DURATION=$DURATION $0\`

| workload | requests/s (range over rounds) | × plain 204 (same round) | p99 ms per round | non-2xx per round | gateway peak RSS MiB so far, per round |
|---|---:|---:|---:|---:|---:|
| plain 204, 64 connections | $(span plain) | 1 | $(col p99 plain) | $(col non2xx plain) | $(col rss_of plain) |
| beacon GET, one hot counter | $(span beacon) | $(ratio beacon plain) | $(col p99 beacon) | $(col non2xx beacon) | $(col rss_of beacon) |
| \`?ack=accepted\` | $(span accepted) | $(ratio accepted plain) | $(col p99 accepted) | $(col non2xx accepted) | $(col rss_of accepted) |
| ack=commit, 64 connections | $(span commit64) | $(ratio commit64 plain) | $(col p99 commit64) | $(col non2xx commit64) | $(col rss_of commit64) |
| plain 204, 256 connections | $(span plain256) | 1 | $(col p99 plain256) | $(col non2xx plain256) | $(col rss_of plain256) |
| ack=commit, 256 connections | $(span commit256) | $(ratio commit256 plain256) | $(col p99 commit256) | $(col non2xx commit256) | $(col rss_of commit256) |
| reads of the hot counter ($READERS conn.) during commit load | $(span reads) | | $(col p99 reads) | $(col non2xx reads) | $(col rss_of reads) |
| commit writes (64) during those reads | $(span mixed-writes) | $(ratio mixed-writes commit64) × solo | $(col p99 mixed-writes) | $(col non2xx mixed-writes) | $(col rss_of mixed-writes) |
| HTTP batch of $BATCH over $BATCH_COUNTERS counters (× $BATCH = increments/s) | $(span batch) | | $(col p99 batch) | $(col non2xx batch) | $(col rss_of batch) |

Beacon GET variants, each × plain beacons (no filter) of the same round:

| workload | requests/s (range over rounds) | × plain beacons (same round) | p99 ms per round | non-2xx per round | gateway peak RSS MiB so far, per round |
|---|---:|---:|---:|---:|---:|
| plain beacons (bot filter off) | $(span beacon-plain) | 1 | $(col p99 beacon-plain) | $(col non2xx beacon-plain) | $(col rss_of beacon-plain) |
| bot filter on (ua-parser crawler list) | $(span beacon) | $(ratio beacon beacon-plain) | $(col p99 beacon) | $(col non2xx beacon) | $(col rss_of beacon) |
| daily window, bot filter on | $(span beacon-windowed) | $(ratio beacon-windowed beacon-plain) | $(col p99 beacon-windowed) | $(col non2xx beacon-windowed) | $(col rss_of beacon-windowed) |
| daily window, bot filter and unique visitors on | $(span beacon-unique) | $(ratio beacon-unique beacon-plain) (× daily window: $(ratio beacon-unique beacon-windowed)) | $(col p99 beacon-unique) | $(col non2xx beacon-unique) | $(col rss_of beacon-unique) |

Where the CPU went in each run ($(nproc) cores; busy = user, system and interrupt time of all cores, iowait counted
idle; microseconds of CPU per request, from /proc; the database's own processes, wrk's threads), per round:

| workload | machine busy % | server µs CPU / request | database µs CPU / request | wrk µs CPU / request |
|---|---:|---:|---:|---:|
$(cpu_row "plain 204, 64 connections" plain)
$(cpu_row "plain beacons (bot filter off)" beacon-plain)
$(cpu_row "beacon GET, bot filter on" beacon)
$(cpu_row "\`?ack=accepted\`" accepted)
$(cpu_row "ack=commit, 64 connections" commit64)
$(cpu_row "plain 204, 256 connections" plain256)
$(cpu_row "ack=commit, 256 connections" commit256)
$(cpu_row "HTTP batch of $BATCH (per request of $BATCH increments)" batch)

The database alone ($( [ "$DB" = postgres ] && echo "pgbench running the gateway's own flush statement, flush-id and fence CTEs included, prepared" || echo "the mysql client running the MySQL store's flush transactions, fence, flush id and upsert, as text statements"),
$FLUSHERS connections — one per ingest verticle and flush in flight — each on its own slot, $DURATION), beside the
flushes the gateway made in the same workloads:

| flush statement | database alone: statements/s | rows/s | p99 ms | gateway: flushes/s per round | gateway ÷ database alone | increments per gateway flush |
|---|---:|---:|---:|---:|---:|---:|
| 1 row (one hot counter, ack=commit, 64 connections) | $DBA_HOT | $DBA_HOT | $DBA_HOT_P99 | $(col flush_rate commit64) | $(share commit64 "$DBA_HOT") | $(per_flush commit64 1) |
| $FLUSH_ROWS rows (HTTP batch of $BATCH over $BATCH_COUNTERS counters) | $DBA_BATCH | $( [[ "$DBA_BATCH" =~ ^[0-9]+$ ]] && echo $((DBA_BATCH * FLUSH_ROWS)) ) | $DBA_BATCH_P99 | $(col flush_rate batch) | $(share batch "$DBA_BATCH") | $(per_flush batch "$BATCH") |

Gateway peak RSS (VmHWM) over the whole run: $GATEWAY_PEAK_RSS MiB (JVM options: \`${GATEWAY_JVM:-none}\`); where the memory
was at the end: $OUT/class-histogram.txt, $OUT/native-memory.txt (with -XX:NativeMemoryTracking=summary).

Sketch bytes in \`${TABLE}_uniques\` after the run (one counter, one day): $UNIQUE_BYTES.

Event bus, one increment per message, ack=commit, next to Redis INCRBY through the Vert.x client, each round
alternating (rows of the bench's own table):

$(for c in 64 512; do echo "$c senders, rounds in order:"; echo; busrows "$c"; echo; done)

Correctness after SIGTERM: hot counter $HOT_SUM in the table for $HOT_ACKED acknowledged (+ at most $((HOT_MAX - HOT_ACKED)) in flight when wrk stopped): $(check "$HOT_SUM" "$HOT_ACKED" "$HOT_MAX");
batch counters $BATCH_SUM for $BATCH_INCR acknowledged (+ at most $((BATCH_MAX - BATCH_INCR))): $(check "$BATCH_SUM" "$BATCH_INCR" "$BATCH_MAX");
plain beacons $BEACON_PLAIN_SUM for $BEACON_PLAIN_ACKED answered (+ at most $((ROUNDS * 64))): $(check "$BEACON_PLAIN_SUM" "$BEACON_PLAIN_ACKED" "$((BEACON_PLAIN_ACKED + ROUNDS * 64))").
Raw wrk outputs and logs: $OUT
REPORT
# a run whose SUMs do not match what was acknowledged fails, whatever its figures
[ "$(check "$HOT_SUM" "$HOT_ACKED" "$HOT_MAX")$(check "$BATCH_SUM" "$BATCH_INCR" "$BATCH_MAX")$(check "$BEACON_PLAIN_SUM" "$BEACON_PLAIN_ACKED" "$((BEACON_PLAIN_ACKED + ROUNDS * 64))")" = okokok ]
