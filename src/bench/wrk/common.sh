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

# drop_gateway_tables TABLE: the counters table and every table the schema steps add beside it
drop_gateway_tables() {
  local t
  for t in "$1_schema" "$1_flushes" "$1_flush_sources" "$1_rollups" "$1_idempotency" "$1_lanes" "$1_windows" \
           "$1_uniques" "$1_visitor_salts" "$1"; do
    sql "DROP TABLE IF EXISTS $t" >/dev/null 2>&1 || true
  done
}
