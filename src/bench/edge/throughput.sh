#!/usr/bin/env bash
# Beacon throughput from many clients (random X-Forwarded-For), per-client limits on vs off, in alternating rounds
# against one gateway: src/bench/edge/throughput.sh JAR [ROUNDS] [SECONDS]. Browser User-Agent, bot filter on.
set -u
JAR=$1; ROUNDS=${2:-3}; SECONDS_EACH=${3:-10}; PORT=18100; DBPORT=19100
OUT=${OUT:-target/edge-throughput}; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
cat >"$OUT/gateway.yaml" <<YAML
http: { host: 127.0.0.1, port: $PORT, trustedProxies: ["127.0.0.1"] }
database: { kind: embedded-postgres, dataDir: $OUT/pg, port: $DBPORT, name: counters }
namespaces:
  limited: { slots: 16, public: true }
  unlimited: { slots: 16, public: true, beacon: { perClientPerMinute: 0, idsPerClientPerHour: 0 } }
YAML
java -jar "$JAR" --config "$OUT/gateway.yaml" >"$OUT/gateway.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 1 120); do [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health/ready")" = 200 ] && break; sleep 0.5; done
run() { NS=$1 wrk -t2 -c64 -d"${SECONDS_EACH}s" -s "$HERE/many-clients.lua" -H "User-Agent: $UA" "http://127.0.0.1:$PORT" \
  | awk -v ns="$1" '/Requests\/sec/ {print ns, $2} /Non-2xx/ {print ns, "non-2xx", $5}'; }
run unlimited >/dev/null; run limited >/dev/null  # warm-up, both paths
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round (load $(awk '{print $1}' /proc/loadavg))"; run limited; run unlimited
done | tee "$OUT/throughput.txt"
