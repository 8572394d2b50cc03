# Sourced by the wrk scripts after common.sh: what the database alone sustains for the gateway's own flush statement,
# so a report can say how close the gateway gets to its database (src/DESIGN.md §7). PostgreSQL: pgbench runs the
# statement the bench jar prints (`flush-statement`, taken from the gateway's store, flush-id and fence CTEs included),
# prepared, one pgbench per flushing connection of the gateway, each on a slot of its own as the gateway's lanes are.
# MySQL / MariaDB: the same with the mysql client, which runs the MySQL store's flushes (one call of the flush
# procedure: fence held shared, flush id, upserts) as the bench jar prints them, as text statements (the gateway prepares them),
# for SECONDS; statements/s are the flush ids committed, and there is no latency to give.
# Expects DB, BENCH_JAR, OUT and TABLE (the gateway's tables exist); defines database_alone.
PGBENCH=${PGBENCH:-$(command -v pgbench || echo /usr/lib/postgresql/15/bin/pgbench)}

# mysql_alone NAME ROWS CLIENTS SECONDS: database_alone on MySQL / MariaDB
mysql_alone() {
  local name=$1 rows=$2 clients=$3 seconds=$4 c pids=() committed
  for c in $(seq 1 "$clients"); do
    sql "INSERT IGNORE INTO ${TABLE}_flush_sources (source, fence) VALUES ('alone-$name-$c', 0)"
    # more flushes than the run can commit, written out before it (the JVM's start is not the database's time)
    java -jar "$BENCH_JAR" flush-statement --dialect mysql --table "$TABLE" --rows "$rows" --slot "$((c - 1))" \
      --source "alone-$name-$c" --type "alone-$name" --flushes "$((seconds * (rows > 100 ? 100 : 20000)))" >"$OUT/$name.$c.sql"
  done
  for c in $(seq 1 "$clients"); do
    timeout "$seconds" mysql -h 127.0.0.1 -P 3306 -u root test <"$OUT/$name.$c.sql" >/dev/null 2>"$OUT/$name.mysql.$c" &
    pids+=($!)
  done
  for c in "${pids[@]}"; do wait "$c" || true; done
  committed=$(sql "SELECT COUNT(*) FROM ${TABLE}_flushes WHERE flush_id LIKE 'alone-$name-%'")
  sql "DELETE FROM $TABLE WHERE record_type = 'alone-$name'"
  sql "DELETE FROM ${TABLE}_flushes WHERE flush_id LIKE 'alone-$name-%'"
  sql "DELETE FROM ${TABLE}_flush_sources WHERE source LIKE 'alone-$name-%'"
  rm -f "$OUT/$name".*.sql
  if grep -q ERROR "$OUT/$name".mysql.* 2>/dev/null; then echo "n/a (the mysql client failed, see $OUT/$name.mysql.*)"; return; fi
  echo "$((committed / seconds)) n/a"
}

# database_alone NAME ROWS CLIENTS SECONDS: pgbench runs the flush of ROWS distinct counters (record_type
# 'pgbench-NAME', so the gateway's SUM checks never see them) from CLIENTS connections for SECONDS; prints
# "statements/s p99-ms" (or "n/a reason"), the raw output in $OUT/NAME.pgbench
database_alone() {
  local name=$1 rows=$2 clients=$3 seconds=$4 c pids=() script="$OUT/$1.sql"
  if [ "$DB" = mysql ]; then mysql_alone "$@"; return; fi
  if [ ! -x "$PGBENCH" ]; then echo "n/a (no pgbench: apt-get install postgresql-client)"; return; fi
  { echo '\set flush_id random(1, 9000000000000000000)'
    echo '\set sequence random(1, 9000000000000000000)'
    java -jar "$BENCH_JAR" flush-statement --table "$TABLE"; } >"$script"
  local types ids deltas
  types=$(awk -v n="$rows" -v t="pgbench-$name" 'BEGIN {printf "{"; for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), t; printf "}"}')
  ids=$(awk -v n="$rows" 'BEGIN {printf "{"; for (i = 0; i < n; i++) printf "%sc-%07d", (i ? "," : ""), i; printf "}"}')
  deltas=$(awk -v n="$rows" 'BEGIN {printf "{"; for (i = 0; i < n; i++) printf "%s1", (i ? "," : ""); printf "}"}')
  rm -f "$OUT/$name".log*
  for c in $(seq 1 "$clients"); do
    sql "INSERT INTO ${TABLE}_flush_sources (source, fence) VALUES ('pgbench-$name-$c', 0) ON CONFLICT DO NOTHING" >/dev/null
    local slots
    slots=$(awk -v n="$rows" -v s="$((c - 1))" 'BEGIN {printf "{"; for (i = 0; i < n; i++) printf "%s%d", (i ? "," : ""), s; printf "}"}')
    PGOPTIONS='-c client_min_messages=warning' "$PGBENCH" -h 127.0.0.1 -p 5432 -U postgres -n -M prepared -c 1 \
      -T "$seconds" -f "$script" -D types="$types" -D ids="$ids" -D slots="$slots" -D deltas="$deltas" \
      -D source="pgbench-$name-$c" -l --log-prefix="$OUT/$name.log.$c" test >"$OUT/$name.pgbench.$c" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for c in "${pids[@]}"; do wait "$c" || failed=1; done
  cat "$OUT/$name".pgbench.* >"$OUT/$name.pgbench"
  sql "DELETE FROM $TABLE WHERE record_type = 'pgbench-$name'; DELETE FROM ${TABLE}_flush_sources WHERE source LIKE 'pgbench-$name-%'" >/dev/null
  if [ "$failed" = 1 ] || ! grep -q '^number of failed transactions: 0 ' "$OUT/$name.pgbench"; then
    echo "n/a (pgbench failed, see $OUT/$name.pgbench)"; return
  fi
  # every pgbench ran for the same SECONDS: their statements/s add up; the p99 is over every statement's latency (µs)
  local tps p99
  tps=$(awk '/^tps = / {s += $3} END {printf "%.0f", s}' "$OUT/$name.pgbench")
  p99=$(cat "$OUT/$name".log.* | awk '{print $3}' | sort -n | awk '{v[NR] = $1} END {i = int(NR * 0.99); if (i < 1) i = 1; printf "%.1f", v[i] / 1000}')
  echo "$tps $p99"
}
