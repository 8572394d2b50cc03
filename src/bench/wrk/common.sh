# Sourced by the wrk scripts: the database client for $DB, the checks every run needs, and the one list of the
# gateway's tables (every schema step's), so a table left behind never tells the gateway the others exist.
# Expects DB, JAR (the gateway), BENCH_JAR (the benchmark's own jar: plain-server, in-process bench) and OUT;
# defines sql and drop_gateway_tables.
case "$DB" in
  postgres) sql() { PGOPTIONS='-c client_min_messages=warning' psql -h 127.0.0.1 -p 5432 -U postgres -d test -tAq -c "$1"; } ;;
  mysql|mariadb) DB=mysql; sql() { mysql -h 127.0.0.1 -P 3306 -u root test -N -B -e "$1"; } ;;
  *) echo "DB must be postgres or mysql" >&2; exit 2 ;;
esac
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
# one build makes both jars (the bench profile adds the benchmark's beside the product's)
{ [ -f "$JAR" ] && [ -f "$BENCH_JAR" ]; } || mvn -q -Pbench package -DskipTests
mkdir -p "$OUT"

# drop_gateway_tables TABLE: the counters table and every table the schema steps add beside it (on MySQL / MariaDB
# also the flush procedure)
drop_gateway_tables() {
  local t
  for t in "$1_schema" "$1_flushes" "$1_flush_sources" "$1_rollups" "$1_idempotency" "$1_lanes" "$1_windows" \
           "$1_uniques" "$1_visitor_salts" "$1"; do
    sql "DROP TABLE IF EXISTS $t" >/dev/null 2>&1 || true
  done
  [ "$DB" = postgres ] || sql "DROP PROCEDURE IF EXISTS $1_write_flush" >/dev/null 2>&1 || true
}

# what a wrk summary in $OUT/NAME.txt says: req/s, requests sent, non-2xx answers, the 99th percentile as printed
rps() { awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$OUT/$1.txt"; }
requests() { awk '/requests in/ {print $1}' "$OUT/$1.txt"; }
non2xx() { awk '/Non-2xx or 3xx responses:/ {n=$5} END {print n+0}' "$OUT/$1.txt"; }
p99() { awk '$1=="99%" {print $2}' "$OUT/$1.txt"; }
# p99_ms FILE: the 99th percentile of a wrk summary in milliseconds (wrk prints us, ms or s)
p99_ms() { awk '$1=="99%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; printf "%.1f", v}' "$1"; }
# flush_count URL: the flushes a gateway has made so far (every ingest verticle's), from its /metrics
flush_count() { curl -s "$1/metrics" | awk '/^gateway_flush_duration_seconds_count/ {s += $2} END {printf "%.0f", s}'; }

# start_gateway NAME JAR CONFIG [VAR=value …]: the gateway in the background on $PORT with the extra environment and
# the JVM options $GATEWAY_JVM (if set), its output in $OUT/NAME.log; returns once /health/ready is 200 (sets GATEWAY_PID)
start_gateway() {
  local name=$1 jar=$2 config=$3
  shift 3
  # shellcheck disable=SC2086 # GATEWAY_JVM is a list of options
  env CG_HTTP_PORT="$PORT" MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" "$@" java ${GATEWAY_JVM:-} -jar "$jar" --config "$config" >>"$OUT/$name.log" 2>&1 &
  GATEWAY_PID=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready" || true)" = 200 ] && return 0
    sleep 0.5
  done
  echo "the gateway ($name) did not become ready; see $OUT/$name.log" >&2; exit 1
}

# peak_rss PID: the process's peak resident set (VmHWM) in MiB, "?" once it is gone
peak_rss() { awk '/^VmHWM:/ {printf "%.0f", $2 / 1024; found=1} END {if (!found) printf "?"}' "/proc/$1/status" 2>/dev/null || printf '?'; }

# where a run's CPU went, from /proc (clock ticks): cpu_ticks PID… sums the processes' user and system time so far (a
# process that is gone adds 0); waited_ticks PID is what that shell's waited-for children (wrk) used so far (pass
# $BASHPID: inside $(…) it would be the substitution's own subshell); machine_ticks
# prints the machine's busy and total ticks (iowait counts as idle: a process waiting for fsync is not using a core)
cpu_ticks() { local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"; }
waited_ticks() { awk '{sub(/^.*\) /, ""); print $14 + $15}' "/proc/$1/stat"; }
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
# written_bytes PID…: the bytes the processes have passed to write calls on files so far (/proc/PID/io wchar: socket
# sends are not in it; a process that is gone adds 0). Not write_bytes: on a kernel that caches files in large folios
# that counts a whole folio for each small write into a clean one (2.3 GB for 1.4 MB of journal frames, measured)
written_bytes() { local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/io" ] && total=$((total + $(awk '/^wchar:/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo 0)))
  done
  echo "$total"; }
# database_pids: the local database server's processes (PostgreSQL's backends included)
database_pids() { if [ "$DB" = postgres ]; then pgrep -x postgres; else pgrep -x mariadbd || pgrep -x mysqld; fi || true; }

# start_plain NAME PORT [JVM option …]: the plain Vert.x 204 server (the bench jar's plain-server) in the background,
# its output in $OUT/NAME.log; returns once it answers 204 (sets PLAIN_PID)
start_plain() {
  local name=$1 port=$2
  shift 2
  java "$@" -jar "$BENCH_JAR" plain-server --port "$port" >>"$OUT/$name.log" 2>&1 &
  PLAIN_PID=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/" || true)" = 204 ] && return 0
    sleep 0.5
  done
  echo "the plain server ($name) did not answer; see $OUT/$name.log" >&2; exit 1
}

# metric_sum URL NAME: the sum over every series of a metric in the gateway's /metrics now ("?" when it has none)
metric_sum() { curl -s "$1/metrics" | awk -v n="$2" 'index($0, n"{") == 1 || index($0, n" ") == 1 {s += $NF; found = 1}
  END {if (found) printf "%.0f", s; else printf "?"}'; }

# p50_ms FILE: the median of a wrk summary in milliseconds, as p99_ms
p50_ms() { awk '$1=="50%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; printf "%.2f", v}' "$1"; }

# wait_idle MAX_LOAD SECONDS: waits until the 1-minute load average is below MAX_LOAD, checking every 10 s for at most
# SECONDS; returns 1 if it never was (a run meant to be quoted needs an idle machine: the load tool, the gateway and
# the database already share its cores)
wait_idle() {
  local max=$1 end=$(( $(date +%s) + $2 ))
  while awk -v l="$(awk '{print $1}' /proc/loadavg)" -v m="$max" 'BEGIN {exit !(l + 0 >= m + 0)}'; do
    [ "$(date +%s)" -ge "$end" ] && return 1
    echo "waiting for an idle machine: 1-minute load $(awk '{print $1}' /proc/loadavg), below $max wanted" >&2
    sleep 10
  done
}
