# Sourced by the wrk scripts after common.sh: what the database alone sustains for the gateway's own flush statement,
# so a report can say how close the gateway gets to its database (src/DESIGN.md §7). PostgreSQL only: pgbench runs the
# statement the bench jar prints (`flush-statement`, taken from the gateway's store, flush-id and fence CTEs included),
# prepared, one pgbench per flushing connection of the gateway, each on a slot of its own as the gateway's lanes are.
# Expects DB, BENCH_JAR, OUT and TABLE (the gateway's tables exist); defines database_alone.
PGBENCH=${PGBENCH:-$(command -v pgbench || echo /usr/lib/postgresql/15/bin/pgbench)}

# database_alone NAME ROWS CLIENTS SECONDS: pgbench runs the flush of ROWS distinct counters (record_type
# 'pgbench-NAME', so the gateway's SUM checks never see them) from CLIENTS connections for SECONDS; prints
# "statements/s p99-ms" (or "n/a reason"), the raw output in $OUT/NAME.pgbench
database_alone() {
  local name=$1 rows=$2 clients=$3 seconds=$4 c pids=() script="$OUT/$1.sql"
  if [ "$DB" != postgres ]; then echo "n/a (pgbench: PostgreSQL only)"; return; fi
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
