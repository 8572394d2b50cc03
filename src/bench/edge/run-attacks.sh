#!/usr/bin/env bash
# The issue's edge attacks, bounded and on loopback, against one gateway jar on its embedded PostgreSQL:
#   src/bench/edge/run-attacks.sh JAR NAME [PORT]   (NAME labels the output; figures in $OUT/NAME.txt)
# -Xmx512m and auth on, as in the issue. Each attack runs a fixed time and stops; the gateway is restarted when an
# attack took it down, and stopped at the end.
set -u
JAR=$1; NAME=$2; PORT=${3:-18080}; DBPORT=$((PORT + 1000))
OUT=${OUT:-target/edge-attacks}; mkdir -p "$OUT"; LOG="$OUT/$NAME.txt"; : >"$LOG"
HERE=$(cd "$(dirname "$0")" && pwd)
TOKEN=writer-token-0123456789
CONFIG="$OUT/$NAME.yaml"
cat >"$CONFIG" <<YAML
http: { host: 127.0.0.1, port: $PORT, trustedProxies: ["127.0.0.1"] }
database: { kind: embedded-postgres, dataDir: $OUT/pg-$NAME, port: $DBPORT, name: counters }
auth: { tokens: ["$TOKEN:write+admin"] }
namespaces:
  pageviews: { slots: 16, public: true }
  likes: { slots: 16 }
  hits: { slots: 4, window: { bucket: hour, retention: 2d } }
YAML
PID=
start() {
  java -Xmx512m -XX:+UseSerialGC -jar "$JAR" --config "$CONFIG" >>"$OUT/$NAME.gateway.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready")" = 200 ] && return 0; sleep 0.5
  done
  echo "gateway did not get ready" | tee -a "$LOG"; return 1
}
stop() { kill "$PID" 2>/dev/null; for _ in $(seq 1 60); do kill -0 "$PID" 2>/dev/null || return 0; sleep 0.5; done; kill -9 "$PID" 2>/dev/null; }
restart_if_down() { if ! kill -0 "$PID" 2>/dev/null || [ "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready")" != 200 ]; then
  echo "(gateway down or not ready: restarted)" | tee -a "$LOG"; kill -9 "$PID" 2>/dev/null; sleep 2; start; fi; }
sql() { PGPASSWORD=$(cat "$OUT/pg-$NAME/gateway-password") psql -h 127.0.0.1 -p "$DBPORT" -U postgres -d counters -At -c "$1" 2>/dev/null; }
trap stop EXIT
start || exit 1
python3 "$HERE/attacks.py" "$PORT" "$PID" flood 300 - | tee -a "$LOG"
restart_if_down
python3 "$HERE/attacks.py" "$PORT" "$PID" flood 3000 "$TOKEN" | tee -a "$LOG"
restart_if_down
python3 "$HERE/attacks.py" "$PORT" "$PID" botflood 5 | tee -a "$LOG"
sleep 1
echo "  counted: crawler target $(sql "SELECT COALESCE(SUM(count),0) FROM slotted_counters WHERE record_type='pageviews' AND record_id='bot-target'"), browser page $(sql "SELECT COALESCE(SUM(count),0) FROM slotted_counters WHERE record_type='pageviews' AND record_id='browser-page'")" | tee -a "$LOG"
python3 "$HERE/attacks.py" "$PORT" "$PID" hammer 5 | tee -a "$LOG"
sleep 1
echo "  counted: $(sql "SELECT COALESCE(SUM(count),0) FROM slotted_counters WHERE record_type='pageviews' AND record_id='hammered'")" | tee -a "$LOG"
BEFORE=$(sql "SELECT pg_total_relation_size('slotted_counters')")
python3 "$HERE/attacks.py" "$PORT" "$PID" ids 5 | tee -a "$LOG"
sleep 1
echo "  rows added: $(sql "SELECT COUNT(*) FROM slotted_counters WHERE record_id LIKE 'inv-%'"), table $((BEFORE / 1024)) -> $(( $(sql "SELECT pg_total_relation_size('slotted_counters')") / 1024 )) KiB" | tee -a "$LOG"
python3 "$HERE/attacks.py" "$PORT" "$PID" heavyload "$TOKEN"
python3 "$HERE/attacks.py" "$PORT" "$PID" heavyreads 15 "$TOKEN" | tee -a "$LOG"
echo "  reads failed in the log: $(grep -c 'read of .* failed' "$OUT/$NAME.gateway.log"), 'Pool closed': $(grep -c 'Pool closed' "$OUT/$NAME.gateway.log")" | tee -a "$LOG"
echo "  metrics: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^gateway_(beacons_dropped_total|edge_refused_total)' | grep -v ' 0.0$' | tr '\n' ';')" | tee -a "$LOG"
# idle connections from one client: without trusted proxies, so 127.0.0.1 is one client like any other
stop
sed -i 's/, trustedProxies: \["127.0.0.1"\]//' "$CONFIG"
start && python3 "$HERE/attacks.py" "$PORT" "$PID" idle 4000 | tee -a "$LOG"
